import type { NormalizedPdfOptions, PageMargins, RenderPdfOptions } from './types.js';

/** Page sizes in points. */
const PAGE_SIZES = { A4: [595.28, 841.89], Letter: [612, 792] } as const;
const DEFAULT_MARGIN = 48;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/** The smallest text area accepted, in points (one inch each way). */
const MIN_AREA = 72;

function positive(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`renderPdf: ${option} must be a positive number`);
  }
  return value;
}

function margin(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`renderPdf: ${option} must be a number of points >= 0`);
  }
  return value;
}

/**
 * Fills in every default (A4, 48 pt margins, 10 MiB) and checks shapes once.
 * @throws TypeError naming the option when its shape is wrong.
 * @internal
 */
export function normalizeOptions(options: RenderPdfOptions = {}): NormalizedPdfOptions {
  const size = options.page?.size ?? 'A4';
  let width: number;
  let height: number;
  if (size === 'A4' || size === 'Letter') [width, height] = PAGE_SIZES[size];
  else if (Array.isArray(size) && size.length === 2) {
    width = positive(size[0], 'page.size[0]');
    height = positive(size[1], 'page.size[1]');
  } else throw new TypeError("renderPdf: page.size must be 'A4', 'Letter' or [width, height] in points");
  const given = options.page?.margins ?? DEFAULT_MARGIN;
  let margins: PageMargins;
  if (typeof given === 'number') {
    const all = margin(given, 'page.margins');
    margins = { top: all, right: all, bottom: all, left: all };
  } else if (typeof given === 'object' && given !== null) {
    margins = {
      top: margin(given.top, 'page.margins.top'),
      right: margin(given.right, 'page.margins.right'),
      bottom: margin(given.bottom, 'page.margins.bottom'),
      left: margin(given.left, 'page.margins.left'),
    };
  } else throw new TypeError('renderPdf: page.margins must be a number or {top, right, bottom, left}');
  if (width - margins.left - margins.right < MIN_AREA || height - margins.top - margins.bottom < MIN_AREA) {
    throw new TypeError(`renderPdf: page.margins leave less than ${MIN_AREA} points of text area`);
  }
  const maxBytes =
    options.maxBytes === undefined ? DEFAULT_MAX_BYTES : positive(options.maxBytes, 'maxBytes');
  return { signal: options.signal, images: options.images, maxBytes, width, height, margins };
}
