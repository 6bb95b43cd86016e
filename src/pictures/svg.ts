/**
 * The few pieces every picture shares: XML escaping, text that fits a width, durations and the
 * colours of statuses.
 * @module
 */

/** Characters XML 1.0 does not allow, lone surrogates included. */
const NOT_XML =
  // eslint-disable-next-line no-control-regex -- these are exactly the characters to replace
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text made safe for XML content and attribute values: markup characters escaped, characters XML
 * cannot hold replaced by U+FFFD. @internal
 */
export function escapeXml(text: string): string {
  return text.replace(NOT_XML, '\uFFFD').replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Average advance of a character of the pictures' sans-serif font, as a share of its size. */
const CHAR_WIDTH = 0.6;

/** About how wide `text` is at `size` px. @internal */
export function textWidth(text: string, size: number): number {
  return [...text].length * size * CHAR_WIDTH;
}

/** `text` cut with an ellipsis to fit about `width` px at `size` px. @internal */
export function fitText(text: string, width: number, size: number): string {
  const chars = [...text.replace(/\s+/g, ' ')];
  const room = Math.max(1, Math.floor(width / (size * CHAR_WIDTH)));
  return chars.length <= room ? chars.join('') : `${chars.slice(0, room - 1).join('')}…`;
}

/** How a `<text>` element looks and how much room it has. @internal */
export interface TextStyle {
  /** Room in px; longer text is cut with an ellipsis and the whole of it goes into a `<title>`. */
  width: number;
  /** Font size in px. */
  size: number;
  /** Its class, naming what the text is. */
  className: string;
  anchor?: 'start' | 'middle' | 'end';
  bold?: boolean;
  /** @default "#1f2328" */
  fill?: string;
}

/** A `<text>` element with escaped content. @internal */
export function textElement(text: string, x: number, y: number, style: TextStyle): string {
  const shown = fitText(text, style.width, style.size);
  const title = shown === text ? '' : `<title>${escapeXml(text)}</title>`;
  const anchor = style.anchor && style.anchor !== 'start' ? ` text-anchor="${style.anchor}"` : '';
  const weight = style.bold ? ' font-weight="600"' : '';
  return `<text class="${style.className}" x="${num(x)}" y="${num(y)}" font-size="${style.size}" fill="${style.fill ?? INK}"${anchor}${weight}>${title}${escapeXml(shown)}</text>`;
}

/** A coordinate with at most one decimal. @internal */
export function num(value: number): string {
  return String(Math.round(value * 10) / 10);
}

/** A duration for people: `3 ms`, `1.2 s`, `2 min 5 s`. @internal */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`;
}

/** Fill colours of step and run statuses. @internal */
export const STATUS_COLOURS: Readonly<Record<string, string>> = {
  succeeded: '#1a7f37',
  failed: '#cf222e',
  running: '#0969da',
  queued: '#8250df',
  skipped: '#8c959f',
  cancelled: '#9a6700',
  interrupted: '#9a6700',
  pending: '#d0d7de',
};

/** The colour of text. @internal */
export const INK = '#1f2328';
/** The colour of secondary text and lines. @internal */
export const MUTED = '#59636e';

/**
 * The opening `<svg>` element of a picture, with its size, title and a white background. Pictures
 * use presentation attributes, no `<style>`, so they look the same inlined in a page. @internal
 */
export function svgOpen(width: number, height: number, title: string, className: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="${className}" width="${num(width)}" height="${num(height)}" viewBox="0 0 ${num(width)} ${num(height)}" role="img" aria-label="${escapeXml(title)}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif">` +
    `<title>${escapeXml(title)}</title>` +
    `<rect class="background" width="${num(width)}" height="${num(height)}" fill="#ffffff"/>`
  );
}
