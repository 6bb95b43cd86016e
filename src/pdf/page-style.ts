import { ValidationError } from '../errors/index.js';
import type { PageMargins } from './types.js';

/** What a template's `@page` rule asks for: size in points and margins. @internal */
export interface PageStyle {
  size?: [number, number];
  margins?: Partial<PageMargins>;
}

const SIZES: Record<string, [number, number]> = {
  a3: [841.89, 1190.55],
  a4: [595.28, 841.89],
  a5: [419.53, 595.28],
  letter: [612, 792],
  legal: [612, 1008],
};
const UNITS: Record<string, number> = { pt: 1, px: 0.75, mm: 72 / 25.4, cm: 72 / 2.54, in: 72 };

function pageError(message: string): ValidationError {
  return new ValidationError([
    { code: 'invalid_page_style', path: 'template', message: `@page: ${message}` },
  ]);
}

function length(text: string, what: string): number {
  const match = /^(\d+(?:\.\d+)?)(pt|px|mm|cm|in)?$/i.exec(text.trim());
  if (!match || (match[2] === undefined && Number(match[1]) !== 0))
    throw pageError(`${what} ${JSON.stringify(text)} is not a length such as 20mm, 1in or 48pt`);
  return Number(match[1]) * (UNITS[(match[2] ?? 'pt').toLowerCase()] ?? 1);
}

/**
 * Reads the `@page` rule of a template's `<style>`: `size` (`A4`, `Letter`, `A3`, `A5`, `Legal`, each
 * with `portrait`/`landscape`, or two lengths) and `margin` (1 to 4 lengths, CSS order) or
 * `margin-top`/`-right`/`-bottom`/`-left`. Other rules and properties are ignored.
 * @throws ValidationError (path `template`) for a size or length it cannot read.
 * @internal
 */
export function pageStyle(css: string): PageStyle {
  const style: PageStyle = {};
  const clean = css.replace(/\/\*[\s\S]*?\*\//g, '');
  for (const rule of clean.matchAll(/@page\s*(?::[\w-]+\s*)?\{([^}]*)\}/gi)) {
    for (const declaration of rule[1]!.split(';')) {
      const at = declaration.indexOf(':');
      if (at < 0) continue;
      const property = declaration.slice(0, at).trim().toLowerCase();
      const value = declaration.slice(at + 1).trim();
      const words = value.split(/\s+/).filter((word) => word !== '');
      if (property === 'size') {
        const named = SIZES[words[0]?.toLowerCase() ?? ''];
        let size: [number, number];
        if (named) size = [...named];
        else if (words.length === 2 && !/^(portrait|landscape)$/i.test(words[1]!))
          size = [length(words[0]!, 'size'), length(words[1]!, 'size')];
        else throw pageError(`size ${JSON.stringify(value)} is not A4, Letter, A3, A5, Legal or two lengths`);
        const orientation = named ? words[1]?.toLowerCase() : undefined;
        if (orientation === 'landscape') size = [size[1], size[0]];
        else if (orientation !== undefined && orientation !== 'portrait')
          throw pageError(`size ${JSON.stringify(value)}: the orientation is portrait or landscape`);
        if (size[0] < 144 || size[1] < 144) throw pageError(`size ${JSON.stringify(value)} is too small`);
        style.size = size;
      } else if (property === 'margin') {
        const [top, right = top, bottom = top, left = right] = words.map((word) => length(word, 'margin'));
        if (top === undefined || words.length > 4)
          throw pageError(`margin ${JSON.stringify(value)} takes 1 to 4 lengths`);
        style.margins = { ...style.margins, top, right: right!, bottom: bottom!, left: left! };
      } else if (/^margin-(top|right|bottom|left)$/.test(property)) {
        const side = property.slice(7) as keyof PageMargins;
        style.margins = { ...style.margins, [side]: length(value, property) };
      }
    }
  }
  return style;
}
