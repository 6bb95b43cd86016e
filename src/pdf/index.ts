/**
 * HTML-template-to-PDF renderer of the `platform/converters/create_pdf` action.
 *
 * Design decisions (docs/semantics.md):
 * - Template: an HTML subset parsed with htmlparser2 — h1-h6, p, b/strong, i/em, br, ul/ol/li, hr,
 *   table/thead/tbody/tr/th/td (colspan; rowspan ignored), a[href] (http, https, mailto only). Other
 *   tags keep their text (div, section, blockquote... also break blocks); script, style, head,
 *   template, noscript, iframe, object, svg and math are dropped with their content; `<title>`
 *   becomes the PDF title (markers in it take text values). White space collapses as in HTML.
 * - Templates are mustache with `[[ ]]` tags (template.ts): sections over LIST values and TABLE rows,
 *   inverted sections, dotted names. `[[.name]]` places the variable `name` itself. Each value becomes
 *   a placeholder that is placed after parsing, in text only: a value is always text, never markup
 *   nor template. A newline in a value is a line break. `[[.name]]` naming no variable is a
 *   ValidationError (path `variables`).
 * - Values: NUMBER = finite number or numeric string, printed as given (ASCII digits, no grouping);
 *   STRING = string; BOOLEAN = `true`/`false`; DATE = ISO string, Date or epoch ms, printed
 *   `YYYY-MM-DD` (UTC); `null` prints nothing. A value of the wrong type is a ValidationError naming
 *   the variable; so are duplicate names.
 * - TABLE: a marker alone in its block becomes the table; inside a paragraph it splits the paragraph
 *   (text before, table, text after); inside a table cell (no nested tables) it prints as lines with
 *   cells joined by ` | `. Column names form the header row; rows are padded or cut to the columns;
 *   without columns there is no header. Number columns: `step` sets the decimals (0.01 → 2, 0.5 → 1,
 *   1 → 0; none → as given), `min`/`max` are not applied (values print as they are),
 *   `latin_numbering` (default on) turns Arabic-Indic, Persian, Devanagari, Bengali, Thai and
 *   fullwidth digits into ASCII. `string.is_url` cells become link annotations (http/https/mailto
 *   only) showing the URL. date → `YYYY-MM-DD`, datetime → `YYYY-MM-DD HH:mm` (UTC).
 * - Tables: column widths from content, text wrapped in cells, numeric columns (declared, or every
 *   filled cell a number) aligned right, header row shaded and bold and repeated on every page, rows
 *   kept whole unless taller than a page.
 * - Scripts: DejaVu Sans subsets (Latin, Latin-1, Latin Extended-A, Greek, Cyrillic, punctuation,
 *   currency); other characters (CJK, Arabic, emoji) print as `?`. No kerning or ligatures.
 * - Output is deterministic: fixed dates (2000-01-01), producer/creator `stepwire`, no document ID,
 *   font subset tags from pdf-lib's seeded generator.
 * - Limits: `maxBytes` (10 MiB) → LimitError `pdf.maxBytes`; the signal is checked between pages
 *   and timers get a turn at least every 40 ms.
 * @module
 */
import { PDFDocument } from 'pdf-lib';
import { CancelledError, ValidationError, type Issue } from '../errors/index.js';
import { FaceSet } from './fonts.js';
import { facesUsed, layoutBlocks } from './layout.js';
import { normalizeOptions } from './options.js';
import { PageWriter } from './page-writer.js';
import { parseTemplate } from './parse.js';
import { expandTemplate } from './template.js';
import { prepareDrawables } from './drawables.js';
import { Furniture } from './furniture.js';
import type { RenderPdfInput, RenderPdfOptions } from './types.js';
import { resolveVariables } from './variables.js';

export type {
  PageMargins,
  PdfValueType,
  PdfVariable,
  RenderPdfInput,
  RenderPdfOptions,
  ValueFormat,
} from './types.js';
export { decodeBase64, encodeBase64 } from './base64.js';

/** Fixed metadata date, so the same input always gives the same bytes. */
const FIXED_DATE = new Date(Date.UTC(2000, 0, 1));

/**
 * Renders an HTML-subset template with `[[.name]]` variables into PDF bytes.
 * @throws ValidationError for a bad template type, a marker naming no variable, or a value not
 *   matching its `value_type` (every issue listed); LimitError `pdf.maxBytes`; CancelledError.
 * @example
 * const bytes = await renderPdf({
 *   template: '<h1>Invoice [[.number]]</h1>[[.lines]]',
 *   variables: [
 *     { name: 'number', value_type: 'NUMBER', value: 42 },
 *     { name: 'lines', value_type: 'TABLE', value: { columns: [{ name: 'Item' }], rows: [['Tea']] } },
 *   ],
 * });
 */
export async function renderPdf(input: RenderPdfInput, options?: RenderPdfOptions): Promise<Uint8Array> {
  const normalized = normalizeOptions(options);
  if (normalized.signal?.aborted) {
    throw new CancelledError('PDF rendering was cancelled', { cause: normalized.signal.reason });
  }
  const issues: Issue[] = [];
  if (typeof input?.template !== 'string') {
    issues.push({ code: 'invalid_type', path: 'template', message: 'template must be a string' });
  }
  if (input?.template_type !== undefined && input.template_type !== 'html') {
    issues.push({
      code: 'invalid_value',
      path: 'template_type',
      message: `template_type ${JSON.stringify(input.template_type)} is not supported; use "html"`,
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  const values = resolveVariables(input.variables);
  const expanded = expandTemplate(input.template, values);
  const parsed = parseTemplate(expanded.html, expanded.slots);
  const page = normalizeOptions({
    ...options,
    page: {
      size: parsed.page.size ?? options?.page?.size ?? 'A4',
      margins: { ...normalized.margins, ...parsed.page.margins },
    },
  });

  const doc = await PDFDocument.create({ updateMetadata: false });
  doc.setProducer('stepwire');
  doc.setCreator('stepwire');
  doc.setCreationDate(FIXED_DATE);
  doc.setModificationDate(FIXED_DATE);
  if (parsed.title !== undefined) doc.setTitle(parsed.title);
  const used = facesUsed([...parsed.blocks, ...parsed.header, ...parsed.footer]);
  const faces = await FaceSet.embed(doc, used);
  const writer = new PageWriter(doc, faces, page);
  const boxOf = await prepareDrawables(
    doc,
    writer,
    [parsed.header, parsed.blocks, parsed.footer],
    options?.images,
  );
  const furniture = new Furniture(writer, faces, boxOf, parsed.header, parsed.footer);
  await furniture.reserve();
  await layoutBlocks(parsed.blocks, writer, faces, boxOf);
  writer.finish();
  await furniture.draw();
  writer.checkSignal();
  const bytes = await doc.save({
    useObjectStreams: true,
    objectsPerTick: 2000,
    updateFieldAppearances: false,
  });
  writer.checkSize(bytes.length);
  return bytes;
}
