import type { PDFDocument } from 'pdf-lib';
import { decodeBase64 } from './base64.js';
import { markupError } from './parse.js';
import type { PageWriter } from './page-writer.js';
import type { Block, ImageRef } from './types.js';

/** Reads the bytes of an image the template names by a URL that is not `data:`; undefined when unknown. */
export type ImageSource = (src: string) => Promise<Uint8Array | undefined>;

/** An image embedded once in the document: its resource name and size in pixels. */
interface EmbeddedImage {
  name: string;
  width: number;
  height: number;
}

/** A code as black rectangles in its own units (`width` x `height`, y up), with its text. */
interface DrawnCode {
  rects: [number, number, number, number][];
  width: number;
  height: number;
  /** Printed under a bar code. */
  caption: string | undefined;
}

/** A block ready to draw: its size in points and how to draw it at a lower-left corner. @internal */
export interface Box {
  width: number;
  height: number;
  draw(writer: PageWriter, x: number, y: number): void;
}

/** Points per pixel of an image without a size (CSS px). */
const PX = 0.75;
const QR_SIZE = 96;
const BAR_HEIGHT = 40;
const CAPTION_SIZE = 8;
const CAPTION_GAP = 2;
/** Biggest image accepted, in bytes (decoded). */
const MAX_IMAGE_BYTES = 8 * 1024 * 1024;

function short(src: string): string {
  return src.length > 60 ? `${src.slice(0, 57)}...` : src;
}

/** Bytes of a `data:` URL (base64 or percent-encoded). */
function dataUrlBytes(src: string): Uint8Array {
  const comma = src.indexOf(',');
  if (comma < 0) throw markupError(`<img src="${short(src)}"> is not a valid data: URL`);
  const meta = src.slice(5, comma);
  const payload = src.slice(comma + 1);
  try {
    if (/;base64$/i.test(meta)) return decodeBase64(payload);
    return new TextEncoder().encode(decodeURIComponent(payload));
  } catch {
    throw markupError(`<img src="${short(src)}">: the data: URL cannot be decoded`);
  }
}

function isPng(bytes: Uint8Array): boolean {
  return bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47;
}

function isJpeg(bytes: Uint8Array): boolean {
  return bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}

/** Merges each row's dark modules into runs, so a QR code is a few hundred rectangles. */
async function qrRects(value: string): Promise<DrawnCode> {
  const { create } = (await import('./qrcode-core.js')).qrcode();
  let size: number;
  let data: ArrayLike<number>;
  try {
    const code = create(value, { errorCorrectionLevel: 'M' });
    size = code.modules.size;
    data = code.modules.data;
  } catch (error) {
    throw markupError(`<qrcode value="${short(value)}">: ${(error as Error).message}`);
  }
  const rects: DrawnCode['rects'] = [];
  for (let row = 0; row < size; row++) {
    let start = -1;
    for (let col = 0; col <= size; col++) {
      const dark = col < size && data[row * size + col] === 1;
      if (dark && start < 0) start = col;
      else if (!dark && start >= 0) {
        rects.push([start, size - row - 1, col - start, 1]);
        start = -1;
      }
    }
  }
  return { rects, width: size, height: size, caption: undefined };
}

/** Bars of a code128 or EAN-13 from bwip-js, drawn by a drawing context that keeps the lines. */
async function barRects(type: 'code128' | 'ean13', value: string): Promise<DrawnCode> {
  const bwip = await import('bwip-js/generic');
  const lines: [number, number, number, number][] = [];
  let box = [0, 0];
  try {
    bwip.render(
      { bcid: type, text: value, scale: 1, height: 10, includetext: false },
      {
        scale: (sx: number, sy: number) => [sx, sy],
        measure: () => ({ width: 0, ascent: 0, descent: 0 }),
        init: (width: number, height: number) => void (box = [width, height]),
        line: (x0: number, y0: number, x1: number, y1: number, lw: number) =>
          void lines.push([x0 - lw / 2, Math.min(y0, y1), lw, Math.abs(y1 - y0) + (x0 === x1 ? 0 : lw)]),
        polygon: () => undefined,
        hexagon: () => undefined,
        ellipse: () => undefined,
        fill: () => undefined,
        text: () => undefined,
        end: () => undefined,
      },
    );
  } catch (error) {
    const message = (error as Error).message.replace(/^bwipp\.\w+#\d+:\s*/, '');
    throw markupError(`<barcode type="${type}" value="${short(value)}">: ${message}`);
  }
  let top = Infinity;
  let bottom = -Infinity;
  for (const [, y, , h] of lines) {
    top = Math.min(top, y);
    bottom = Math.max(bottom, y + h);
  }
  const height = lines.length > 0 ? bottom - top : 1;
  // bwip-js measures y down from the top; PDF measures it up.
  const rects = lines.map(([x, y, w, h]): [number, number, number, number] => [x, bottom - y - h, w, h]);
  return { rects, width: box[0]!, height, caption: value };
}

/**
 * Embeds every image of the document once (by its src) and encodes every code once, before
 * layout. A `data:` URL (PNG or JPEG) is read in place; another URL is asked of `source` (the
 * step's file stores); an http(s) URL nobody stores is refused, never fetched.
 * @throws ValidationError (path `template`) naming the element that cannot be drawn.
 * @internal
 */
export async function prepareDrawables(
  doc: PDFDocument,
  writer: PageWriter,
  blockLists: readonly (readonly Block[])[],
  source: ImageSource | undefined,
): Promise<(block: Block, maxWidth: number, maxHeight: number) => Box | undefined> {
  const images = new Map<string, EmbeddedImage>();
  const codes = new Map<string, DrawnCode>();
  for (const blocks of blockLists) {
    for (const block of blocks) {
      if (block.kind === 'image' && !images.has(block.image.src)) {
        images.set(block.image.src, await embedImage(doc, writer, block.image, source, images.size + 1));
      } else if (block.kind === 'code') {
        const key = `${block.code.type}\u0000${block.code.value}`;
        if (!codes.has(key))
          codes.set(
            key,
            block.code.type === 'qrcode'
              ? await qrRects(block.code.value)
              : await barRects(block.code.type, block.code.value),
          );
      }
    }
  }
  return (block, maxWidth, maxHeight) => {
    if (block.kind === 'image') {
      const image = images.get(block.image.src)!;
      const size = fit(block.image, image.width * PX, image.height * PX, maxWidth, maxHeight);
      return { ...size, draw: (w, x, y) => w.image(image.name, x, y, size.width, size.height) };
    }
    if (block.kind !== 'code') return undefined;
    const code = codes.get(`${block.code.type}\u0000${block.code.value}`)!;
    const ref = block.code;
    const natural = ref.type === 'qrcode' ? QR_SIZE : code.width;
    const barHeight = ref.type === 'qrcode' ? undefined : (ref.height ?? BAR_HEIGHT);
    const size = fit(
      { width: ref.width, height: ref.type === 'qrcode' ? ref.height : barHeight },
      natural,
      ref.type === 'qrcode' ? QR_SIZE : BAR_HEIGHT,
      maxWidth,
      maxHeight - (code.caption ? CAPTION_SIZE + CAPTION_GAP : 0),
    );
    const sx = size.width / code.width;
    const sy = size.height / code.height;
    const captionHeight = code.caption ? CAPTION_SIZE * 1.2 + CAPTION_GAP : 0;
    return {
      width: size.width,
      height: size.height + captionHeight,
      draw: (writer, x, y) => {
        writer.fillRects(
          code.rects.map(([rx, ry, rw, rh]) => [x + rx * sx, y + captionHeight + ry * sy, rw * sx, rh * sy]),
        );
        if (code.caption) writer.caption(code.caption, x + size.width / 2, y + 2, CAPTION_SIZE);
      },
    };
  };
}

/** Size of a box: as asked (one side keeps the aspect), else natural; never wider or taller than allowed. */
function fit(
  asked: { width: number | undefined; height: number | undefined },
  naturalWidth: number,
  naturalHeight: number,
  maxWidth: number,
  maxHeight: number,
): { width: number; height: number } {
  let width = asked.width ?? (asked.height ? (naturalWidth * asked.height) / naturalHeight : naturalWidth);
  let height = asked.height ?? (asked.width ? (naturalHeight * asked.width) / naturalWidth : naturalHeight);
  if (width > maxWidth) {
    height *= maxWidth / width;
    width = maxWidth;
  }
  if (height > maxHeight) {
    width *= maxHeight / height;
    height = maxHeight;
  }
  return { width, height };
}

async function embedImage(
  doc: PDFDocument,
  writer: PageWriter,
  image: ImageRef,
  source: ImageSource | undefined,
  number: number,
): Promise<EmbeddedImage> {
  const src = image.src;
  let bytes: Uint8Array | undefined;
  if (/^data:/i.test(src)) bytes = dataUrlBytes(src);
  else {
    bytes = source ? await source(src) : undefined;
    if (!bytes) {
      throw markupError(
        /^https?:/i.test(src)
          ? `<img src="${short(src)}">: remote images are not fetched; use a data: URL or a file of the step's file store`
          : `<img src="${short(src)}">: no file store of this step has this file`,
      );
    }
  }
  if (bytes.length > MAX_IMAGE_BYTES)
    throw markupError(`<img src="${short(src)}"> is larger than ${MAX_IMAGE_BYTES / (1024 * 1024)} MiB`);
  let embedded;
  try {
    if (isPng(bytes)) embedded = await doc.embedPng(bytes);
    else if (isJpeg(bytes)) embedded = await doc.embedJpg(bytes);
  } catch (error) {
    throw markupError(`<img src="${short(src)}"> cannot be read: ${(error as Error).message}`);
  }
  if (!embedded) throw markupError(`<img src="${short(src)}"> is not a PNG or JPEG image`);
  const name = `Im${number}`;
  writer.addImage(name, embedded.ref);
  return { name, width: embedded.width, height: embedded.height };
}
