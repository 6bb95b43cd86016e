import type { PDFFont } from 'pdf-lib';

const MISSING_GLYPH = '0000';
const FALLBACK = '?'.charCodeAt(0);

/**
 * One embedded font face of one document, with per-character caches: the advance width (at size 1)
 * and the glyph code in the document's font subset. Measuring and encoding then cost one array read
 * per character instead of a font layout per string. Characters the font lacks print as `?`.
 * @internal
 */
export class TextFace {
  /** Advance width at size 1 per UTF-16 code unit; 0 = not looked up yet. */
  readonly #widths = new Float32Array(0x10000);
  /** Hex glyph code (4 digits) per UTF-16 code unit in this document's subset. */
  readonly #hex: string[] = [];

  constructor(
    /** The pdf-lib font (embedded with `subset: true`). */
    readonly font: PDFFont,
    /** Name of the font in the page resources, e.g. `F1`. */
    readonly resourceName: string,
  ) {}

  #load(code: number): void {
    const char = String.fromCharCode(code);
    let hex = this.font.encodeText(char).asString();
    let width: number;
    if (hex === MISSING_GLYPH && code !== FALLBACK) {
      this.#load(FALLBACK);
      hex = this.#hex[FALLBACK]!;
      width = this.#widths[FALLBACK]!;
    } else width = this.font.widthOfTextAtSize(char, 1);
    this.#hex[code] = hex;
    this.#widths[code] = width > 0 ? width : 1e-9;
  }

  /** Width of `text` at font size 1 (multiply by the size). */
  width(text: string): number {
    const widths = this.#widths;
    let total = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      let w = widths[code]!;
      if (w === 0) {
        this.#load(code);
        w = widths[code]!;
      }
      total += w;
    }
    return total;
  }

  /** Width of one UTF-16 code unit at size 1. */
  charWidth(code: number): number {
    let w = this.#widths[code]!;
    if (w === 0) {
      this.#load(code);
      w = this.#widths[code]!;
    }
    return w;
  }

  /** Hex string (without `<>`) of `text` in this face, for a `Tj` operator. */
  encode(text: string): string {
    const table = this.#hex;
    let out = '';
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      let hex = table[code];
      if (hex === undefined) {
        this.#load(code);
        hex = table[code]!;
      }
      out += hex;
    }
    return out;
  }
}
