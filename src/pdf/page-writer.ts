import { PDFHexString, PDFName, type PDFDocument, type PDFRef } from 'pdf-lib';
import { CancelledError, LimitError } from '../errors/index.js';
import type { FaceSet } from './fonts.js';
import type { TextFace } from './text-face.js';
import type { NormalizedPdfOptions } from './types.js';

/** A run of text in one face, as laid out on a line. @internal */
export interface Segment {
  face: TextFace;
  text: string;
  /** Width in points at the size it was laid out for. */
  width: number;
  link: string | undefined;
}

/** DejaVu Sans ascender and descender, as fractions of the font size. @internal */
export const ASCENT = 0.928;
/** @internal */
export const DESCENT = 0.236;

const LINK_COLOR = '0 0 0.7 rg';
const TEXT_COLOR = '0 g';
/** Let timers (AbortSignal.timeout) run at least this often, in milliseconds. */
const YIELD_EVERY_MS = 40;

/** Hex of an ASCII string (URIs are 7-bit; hex avoids escaping parentheses). */
function asciiHex(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) out += (text.charCodeAt(i) & 0x7f).toString(16).padStart(2, '0');
  return out;
}

/** Two-decimal number for content streams (no exponent, no trailing zeros). */
function num(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/**
 * Writes pages as raw content streams: graphics (fills, rules) first, then one text object per page
 * with `Td`/`Tf`/`Tj` operators, fonts shared through one resources dictionary. Checks the signal and
 * the size limit between pages.
 * @internal
 */
export class PageWriter {
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
  /** Current vertical position (PDF coordinates: decreasing down the page). */
  y: number;
  pageCount = 0;

  readonly #doc: PDFDocument;
  readonly #options: NormalizedPdfOptions;
  readonly #resources: PDFRef;
  #graphics: string[] = [];
  #text: string[] = [];
  #links: { rect: [number, number, number, number]; url: string }[] = [];
  #face: TextFace | undefined;
  #size = 0;
  #color = TEXT_COLOR;
  #tx = 0;
  #ty = 0;
  #stroke = '';
  #bytes = 0;
  #lastYield = Date.now();

  constructor(doc: PDFDocument, faces: FaceSet, options: NormalizedPdfOptions) {
    this.#doc = doc;
    this.#options = options;
    const { margins, width, height } = options;
    this.left = margins.left;
    this.right = width - margins.right;
    this.top = height - margins.top;
    this.bottom = margins.bottom;
    this.y = this.top;
    const fonts: Record<string, PDFRef> = {};
    for (const face of faces.all()) fonts[face.resourceName] = face.font.ref;
    const context = doc.context;
    this.#resources = context.register(context.obj({ Font: fonts, ProcSet: ['PDF', 'Text'] }));
  }

  /** Width available between the margins. */
  get width(): number {
    return this.right - this.left;
  }

  /** Whether `height` points still fit above the bottom margin. */
  fits(height: number): boolean {
    return this.y - height >= this.bottom - 0.01;
  }

  /** Whether nothing was placed on the page yet. */
  atTop(): boolean {
    return this.y >= this.top;
  }

  /** Draws a line of segments starting at `x` with its baseline at `baseline`. */
  textLine(x: number, baseline: number, size: number, segments: readonly Segment[]): void {
    if (segments.length === 0) return;
    const out = this.#text;
    const rx = Math.round(x * 100) / 100;
    const ry = Math.round(baseline * 100) / 100;
    out.push(`${num(rx - this.#tx)} ${num(ry - this.#ty)} Td\n`);
    this.#tx = rx;
    this.#ty = ry;
    let cursor = x;
    for (const segment of segments) {
      if (segment.face !== this.#face || size !== this.#size) {
        this.#face = segment.face;
        this.#size = size;
        out.push(`/${segment.face.resourceName} ${num(size)} Tf\n`);
      }
      const color = segment.link === undefined ? TEXT_COLOR : LINK_COLOR;
      if (color !== this.#color) {
        this.#color = color;
        out.push(color + '\n');
      }
      out.push(`<${segment.face.encode(segment.text)}> Tj\n`);
      if (segment.link !== undefined) {
        this.#links.push({
          rect: [cursor, baseline - DESCENT * size, cursor + segment.width, baseline + ASCENT * size],
          url: segment.link,
        });
      }
      cursor += segment.width;
    }
  }

  /** Fills a rectangle (x, y = lower-left corner) with a gray level (0 black, 1 white). */
  fillRect(x: number, y: number, width: number, height: number, gray: number): void {
    this.#endPath();
    this.#graphics.push(`${num(gray)} g ${num(x)} ${num(y)} ${num(width)} ${num(height)} re f\n`);
  }

  /** Strokes a straight line; consecutive lines of one style share one path. */
  line(x1: number, y1: number, x2: number, y2: number, lineWidth: number, gray: number): void {
    const stroke = `${num(gray)} G ${num(lineWidth)} w\n`;
    if (stroke !== this.#stroke) {
      this.#endPath();
      this.#graphics.push(stroke);
      this.#stroke = stroke;
    }
    this.#graphics.push(`${num(x1)} ${num(y1)} m ${num(x2)} ${num(y2)} l\n`);
  }

  #endPath(): void {
    if (this.#stroke !== '') this.#graphics.push('S\n');
    this.#stroke = '';
  }

  /** Ends the current page and starts the next one (checks signal, time slice and size limit). */
  async newPage(): Promise<void> {
    this.#flushPage();
    this.checkSize(this.#bytes);
    if (Date.now() - this.#lastYield > YIELD_EVERY_MS) {
      await new Promise<void>((resolve) => setTimeout(resolve, 0));
      this.#lastYield = Date.now();
    }
    this.checkSignal();
    this.y = this.top;
  }

  /** Throws CancelledError when the signal was aborted. */
  checkSignal(): void {
    const signal = this.#options.signal;
    if (signal?.aborted) throw new CancelledError('PDF rendering was cancelled', { cause: signal.reason });
  }

  /** Writes the last page. */
  finish(): void {
    this.#flushPage();
    this.checkSize(this.#bytes);
  }

  /** Throws LimitError when `size` bytes exceed `maxBytes`. */
  checkSize(size: number): void {
    const max = this.#options.maxBytes;
    if (size > max) {
      throw new LimitError(
        'pdf.maxBytes',
        `The PDF is larger than pdf.maxBytes (${max} bytes); use a shorter document or raise maxBytes`,
      );
    }
  }

  #flushPage(): void {
    this.#endPath();
    const content = `${this.#graphics.join('')}BT\n${TEXT_COLOR}\n${this.#text.join('')}ET\n`;
    const { context } = this.#doc;
    const page = this.#doc.addPage([this.#options.width, this.#options.height]);
    page.node.set(PDFName.of('Resources'), this.#resources);
    // pdf-lib's deflate (pako) measured as fast as CompressionStream on Node, and stays synchronous.
    const stream = context.flateStream(new TextEncoder().encode(content));
    this.#bytes += stream.getContentsSize();
    page.node.set(PDFName.of('Contents'), context.register(stream));
    if (this.#links.length > 0) {
      const annots = this.#links.map(({ rect, url }) =>
        context.register(
          context.obj({
            Type: 'Annot',
            Subtype: 'Link',
            Rect: rect.map((v) => Math.round(v * 100) / 100),
            Border: [0, 0, 0],
            A: { Type: 'Action', S: 'URI', URI: PDFHexString.of(asciiHex(url)) },
          }),
        ),
      );
      page.node.set(PDFName.of('Annots'), context.obj(annots));
    }
    this.pageCount++;
    this.#graphics = [];
    this.#text = [];
    this.#links = [];
    this.#face = undefined;
    this.#size = 0;
    this.#color = TEXT_COLOR;
    this.#tx = 0;
    this.#ty = 0;
  }
}
