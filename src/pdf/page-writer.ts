import {
  PDFArray,
  PDFDict,
  PDFHexString,
  PDFName,
  type PDFContext,
  type PDFRawStream,
  type PDFDocument,
  type PDFPage,
  type PDFRef,
} from 'pdf-lib';
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

/** Three-decimal number, for the modules of codes (bars must not drift). */
function num3(value: number): string {
  return String(Math.round(value * 1000) / 1000);
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
  /** Top of the body area (below a page header). */
  top: number;
  /** Bottom of the body area (above a page footer). */
  bottom: number;
  /** Current vertical position (PDF coordinates: decreasing down the page). */
  y: number;
  pageCount = 0;

  readonly #doc: PDFDocument;
  readonly #faces: FaceSet;
  readonly #options: NormalizedPdfOptions;
  readonly #resources: PDFRef;
  readonly #resourceDict: PDFDict;
  #xobjects: PDFDict | undefined;
  readonly #pages: PDFPage[] = [];
  /** Set while drawing page furniture: content goes to a capture, `newPage` does nothing. */
  #capturing = false;
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
    this.#faces = faces;
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
    this.#resourceDict = context.obj({ Font: fonts, ProcSet: ['PDF', 'Text', 'ImageC'] });
    this.#resources = context.register(this.#resourceDict);
  }

  /** Makes an image XObject available to every page under `name`. */
  addImage(name: string, ref: PDFRef): void {
    if (!this.#xobjects) {
      this.#xobjects = this.#doc.context.obj({});
      this.#resourceDict.set(PDFName.of('XObject'), this.#xobjects);
    }
    this.#xobjects.set(PDFName.of(name), ref);
  }

  /** Draws the image XObject `name` into the box (x, y = lower-left corner). */
  image(name: string, x: number, y: number, width: number, height: number): void {
    this.#endPath();
    this.#graphics.push(`q ${num(width)} 0 0 ${num(height)} ${num(x)} ${num(y)} cm /${name} Do Q\n`);
  }

  /** Draws one line of regular text centred on `centerX`. */
  caption(text: string, centerX: number, baseline: number, size: number): void {
    const face = this.#faces.pick(false, false);
    const width = face.width(text) * size;
    this.textLine(centerX - width / 2, baseline, size, [{ face, text, width, link: undefined }]);
  }

  /** Fills black rectangles `[x, y, width, height]` (lower-left corners) as one path. */
  fillRects(rects: readonly (readonly [number, number, number, number])[]): void {
    if (rects.length === 0) return;
    this.#endPath();
    const out = ['0 g\n'];
    for (const [x, y, w, h] of rects) out.push(`${num3(x)} ${num3(y)} ${num3(w)} ${num3(h)} re\n`);
    out.push('f\n');
    this.#graphics.push(out.join(''));
  }

  /**
   * Runs each part's `draw` with the body area set to its `top`..`bottom`, the output kept apart:
   * appended to page `index` (0-based) as one more content stream, or thrown away when `index` is
   * undefined (to measure). `newPage` does nothing meanwhile. Returns the height each part used.
   */
  async furniture(
    index: number | undefined,
    parts: readonly { top: number; bottom: number; draw: () => Promise<void> }[],
  ): Promise<number[]> {
    const saved = {
      graphics: this.#graphics,
      text: this.#text,
      links: this.#links,
      y: this.y,
      top: this.top,
      bottom: this.bottom,
    };
    this.#graphics = [];
    this.#text = [];
    this.#links = [];
    this.#resetText();
    this.#capturing = true;
    try {
      const used: number[] = [];
      for (const part of parts) {
        this.top = part.top;
        this.bottom = part.bottom;
        this.y = part.top;
        await part.draw();
        used.push(part.top - this.y);
      }
      this.#endPath();
      const page = index === undefined ? undefined : this.#pages[index];
      if (page && (this.#graphics.length > 0 || this.#text.length > 0)) {
        const stream = contentStream(this.#doc.context, this.#content());
        this.#bytes += stream.getContentsSize();
        const contents = page.node.get(PDFName.of('Contents'));
        const array =
          contents instanceof PDFArray ? contents : this.#doc.context.obj(contents ? [contents] : []);
        array.push(this.#doc.context.register(stream));
        page.node.set(PDFName.of('Contents'), array);
        this.#addLinks(page);
      }
      return used;
    } finally {
      this.#capturing = false;
      this.#graphics = saved.graphics;
      this.#text = saved.text;
      this.#links = saved.links;
      this.#resetText();
      this.y = saved.y;
      this.top = saved.top;
      this.bottom = saved.bottom;
    }
  }

  #resetText(): void {
    this.#face = undefined;
    this.#size = 0;
    this.#color = TEXT_COLOR;
    this.#tx = 0;
    this.#ty = 0;
    this.#stroke = '';
  }

  #content(): string {
    return `q\n${this.#graphics.join('')}BT\n${TEXT_COLOR}\n${this.#text.join('')}ET\nQ\n`;
  }

  #addLinks(page: PDFPage): void {
    if (this.#links.length === 0) return;
    const { context } = this.#doc;
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
    const existing = page.node.get(PDFName.of('Annots'));
    if (existing instanceof PDFArray) for (const annot of annots) existing.push(annot);
    else page.node.set(PDFName.of('Annots'), context.obj(annots));
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
    if (this.#capturing) return;
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
    const content = this.#content();
    const { context } = this.#doc;
    const page = this.#doc.addPage([this.#options.width, this.#options.height]);
    page.node.set(PDFName.of('Resources'), this.#resources);
    const stream = contentStream(context, content);
    this.#bytes += stream.getContentsSize();
    page.node.set(PDFName.of('Contents'), context.register(stream));
    this.#addLinks(page);
    this.#pages.push(page);
    this.pageCount++;
    this.#graphics = [];
    this.#text = [];
    this.#links = [];
    this.#resetText();
  }
}

/** Content streams shorter than this are stored as they are (see {@link contentStream}). */
const DEFLATE_FROM = 1024;

/**
 * A page's content stream, deflated; one shorter than {@link DEFLATE_FROM} bytes (a page's header and
 * footer, a short last page) as it is: deflate would save a hundred bytes of it, and each deflate
 * starts by allocating and clearing a quarter of a megabyte of tables, which cost a document with a
 * footer more than drawing the footer did. pdf-lib's deflate (pako) measured as fast as
 * CompressionStream on Node, and stays synchronous.
 */
function contentStream(context: PDFContext, content: string): PDFRawStream {
  const bytes = new TextEncoder().encode(content);
  return bytes.length < DEFLATE_FROM ? context.stream(bytes) : context.flateStream(bytes);
}
