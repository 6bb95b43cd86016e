import { Parser } from 'htmlparser2';
import { LimitError, ValidationError } from '../errors/index.js';
import { cleanText } from './clean-text.js';
import { safeLink } from './format.js';
import { dataTableBlock, tableAsLines } from './table-value.js';
import type { Block, Inline, TableBlock, TableCell, TextRole } from './types.js';
import { PLACEHOLDER, type Slot } from './template.js';
import { pageStyle, type PageStyle } from './page-style.js';

/** Result of parsing a template: blocks to lay out, page header and footer, `@page`, the `<title>`. @internal */
export interface ParsedTemplate {
  blocks: Block[];
  header: Block[];
  footer: Block[];
  page: PageStyle;
  title: string | undefined;
}

/** Fails the step for markup that cannot be drawn, naming the element. @internal */
export function markupError(message: string): ValidationError {
  return new ValidationError([{ code: 'invalid_markup', path: 'template', message }]);
}

const BREAK_BEFORE = /(?:^|;)\s*(?:page-break-before\s*:\s*always|break-before\s*:\s*page)\s*(?:;|$)/i;
const BREAK_AFTER = /(?:^|;)\s*(?:page-break-after\s*:\s*always|break-after\s*:\s*page)\s*(?:;|$)/i;
const PAGE_MARKS = /[\uE002\uE003]/g;

/** A length attribute (`120`, `120px`, `30mm`, `2cm`, `1in`, `40pt`) in points; px is 0.75 pt. @internal */
export function lengthOf(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(px|pt|mm|cm|in)?\s*$/i.exec(text);
  const factor = { px: 0.75, pt: 1, mm: 72 / 25.4, cm: 72 / 2.54, in: 72 }[
    (match?.[2] ?? 'px').toLowerCase() as 'px'
  ];
  const value = match ? Number(match[1]) * factor : NaN;
  if (!(value > 0) || value > 14_400)
    throw markupError(
      `${what} is ${JSON.stringify(text)}; give a positive length such as 120, 120px, 30mm or 1in`,
    );
  return value;
}

function alignOf(attribs: Record<string, string>): 'left' | 'center' | 'right' {
  const given = (attribs['align'] ?? /text-align\s*:\s*(\w+)/i.exec(attribs['style'] ?? '')?.[1] ?? '')
    .toLowerCase()
    .trim();
  return given === 'center' || given === 'right' ? given : 'left';
}

const DROPPED = new Set([
  'script',
  'style',
  'head',
  'template',
  'noscript',
  'iframe',
  'object',
  'svg',
  'math',
]);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const INDENTED = new Set(['blockquote', 'dd']);
const BLOCKS = new Set([
  ...['p', 'div', 'section', 'article', 'header', 'footer', 'main', 'nav', 'aside', 'blockquote', 'pre'],
  ...['address', 'figure', 'figcaption', 'center', 'form', 'fieldset', 'dl', 'dt', 'dd', 'body', 'html'],
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'ul', 'ol', 'caption'],
]);
const BOLD = new Set(['b', 'strong', 'th']);
const ITALIC = new Set(['i', 'em', 'cite', 'var', 'dfn']);

interface TableBuilder {
  header: TableCell[][];
  body: TableCell[][];
  inHead: boolean;
  row: { cells: TableCell[]; allTh: boolean; head: boolean } | undefined;
  cell: TableCell | undefined;
  loose: Inline[];
}

/**
 * Most elements open inside one another. Real templates nest a few levels; a template nesting
 * thousands (`'<div>'.repeat(200000)`) would hold the process for seconds in the parser, whose cost
 * grows with the depth at every tag, before any time limit could be checked.
 */
export const MAX_TEMPLATE_DEPTH = 256;

/**
 * The most characters of variable values a template's markers may place, all together (the same long
 * value placed by 150,000 markers ran the host out of memory before any limit of the PDF applied).
 */
const MAX_PLACED_CHARS = 16 * 1024 * 1024;

/**
 * Parses the expanded HTML subset into blocks. Values (placeholders naming their slots) are placed
 * after parsing, inside text only, so a value is always text, never markup. Unsupported tags keep
 * their text; script/style are dropped.
 * @throws {@link ValidationError} at `template` when elements nest deeper than {@link MAX_TEMPLATE_DEPTH}.
 * @internal
 */
export function parseTemplate(template: string, slots: readonly Slot[]): ParsedTemplate {
  const body: Block[] = [];
  const header: Block[] = [];
  const footer: Block[] = [];
  let blocks = body;
  /** Which furniture element is open (`header`/`footer` at the top level), and at what depth. */
  let furniture: { depth: number } | undefined;
  let styleDepth = 0;
  let styleText = '';
  /** Per open element: whether it breaks the page after it closes. */
  const breakAfter: boolean[] = [];
  let pending = '';
  let dropDepth = 0;
  let bold = 0;
  let italic = 0;
  const links: (string | undefined)[] = [];
  const headings: TextRole[] = [];
  const lists: { ordered: boolean; next: number }[] = [];
  let indentExtra = 0;
  let bullet: string | undefined;
  let inlines: Inline[] = [];
  let table: TableBuilder | undefined;
  let nestedTables = 0;
  let title: string | undefined;
  let inTitle = false;

  const target = (): Inline[] => (table ? (table.cell?.inlines ?? table.loose) : inlines);
  const style = () => ({ bold: bold > 0, italic: italic > 0, link: links[links.length - 1] });

  const pushText = (text: string, out: Inline[]): void => {
    if (text !== '') out.push({ kind: 'text', text, ...style() });
  };

  /** Characters of the values placed so far (see {@link MAX_PLACED_CHARS}). */
  let placed = 0;
  /** A value's text: a newline is a line break, a tab a space. */
  const placeText = (text: string, out: Inline[]): void => {
    placed += text.length;
    if (placed > MAX_PLACED_CHARS)
      throw new LimitError(
        'pdf.text',
        `the template's markers place more than ${MAX_PLACED_CHARS / (1024 * 1024)} Mi characters of values; a PDF this large could not be made`,
      );
    cleanText(text)
      .split(/\r\n|\r|\n/)
      .forEach((line, i) => {
        if (i > 0) out.push({ kind: 'break' });
        pushText(line.replace(/[\t\f]/g, ' '), out);
      });
  };

  const placeValue = (value: Slot, out: Inline[]): void => {
    if (value.kind === 'text') return placeText(value.text, out);
    if (!table) return void out.push({ kind: 'table', table: value.table });
    // A table inside a table cell: its lines, each a line of the cell.
    tableAsLines(value.table).forEach((line, i) => {
      if (i > 0) out.push({ kind: 'break' });
      placeText(line, out);
    });
  };

  const processText = (): void => {
    const raw = pending;
    pending = '';
    if (inTitle) title = (title ?? '') + raw;
    if (styleDepth > 0) styleText += raw;
    if (raw === '' || dropDepth > 0 || inTitle) return;
    if (!furniture && /[\uE002\uE003]/.test(raw)) return void processTextIn(raw.replace(PAGE_MARKS, ''));
    processTextIn(raw);
  };

  const processTextIn = (raw: string): void => {
    const out = target();
    let last = 0;
    for (const match of raw.matchAll(PLACEHOLDER)) {
      pushText(cleanText(raw.slice(last, match.index).replace(/[ \t\n\r\f]+/g, ' ')), out);
      last = match.index + match[0].length;
      const value = slots[Number(match[1])];
      if (value) placeValue(value, out);
    }
    pushText(cleanText(raw.slice(last).replace(/[ \t\n\r\f]+/g, ' ')), out);
  };

  const flush = (): void => {
    if (table) return;
    const items = inlines;
    inlines = [];
    const role: TextRole =
      headings[headings.length - 1] ?? (bullet !== undefined || lists.length > 0 ? 'li' : 'p');
    const indent = lists.length + indentExtra;
    let part: Inline[] = [];
    const emit = (): void => {
      if (part.some((item) => item.kind === 'break' || /\S/.test(item.kind === 'text' ? item.text : ''))) {
        blocks.push({ kind: 'text', role, inlines: part, indent, bullet });
        bullet = undefined;
      }
      part = [];
    };
    for (const item of items) {
      if (item.kind === 'table') {
        emit();
        blocks.push(dataTableBlock(item.table));
      } else part.push(item);
    }
    emit();
  };

  const finishCell = (): void => {
    if (!table?.cell) return;
    if (!table.row) table.row = { cells: [], allTh: true, head: table.inHead };
    table.row.cells.push(table.cell);
    table.cell = undefined;
  };
  const finishRow = (): void => {
    if (!table) return;
    finishCell();
    const row = table.row;
    table.row = undefined;
    if (!row || row.cells.length === 0) return;
    const isHeader = row.head || (row.allTh && table.body.length === 0);
    (isHeader ? table.header : table.body).push(row.cells);
  };
  const finishTable = (): void => {
    if (!table) return;
    finishRow();
    const done = table;
    table = undefined;
    inlines.push(...done.loose);
    flush();
    const block: TableBlock = { kind: 'table', header: done.header, body: done.body, numeric: [] };
    if (block.header.length + block.body.length > 0) blocks.push(block);
  };

  let depth = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (++depth > MAX_TEMPLATE_DEPTH)
          throw new ValidationError([
            {
              code: 'too_deep',
              path: 'template',
              message: `the template nests elements more than ${MAX_TEMPLATE_DEPTH} deep (at a <${name}>); close the elements it opens`,
            },
          ]);
        processText();
        const breaks = BREAK_AFTER.test(attribs['style'] ?? '');
        breakAfter.push(breaks);
        if (name === 'title') return void (inTitle = true);
        if (name === 'style') styleDepth++;
        if (DROPPED.has(name)) return void dropDepth++;
        if (dropDepth > 0) return;
        if (!table && BREAK_BEFORE.test(attribs['style'] ?? '')) {
          flush();
          blocks.push({ kind: 'pageBreak' });
        }
        if (!table && (name === 'header' || name === 'footer') && !furniture && blocks === body) {
          flush();
          furniture = { depth };
          blocks = name === 'header' ? header : footer;
          blocks.length = 0;
          return;
        }
        if (name === 'img' || name === 'qrcode' || name === 'barcode') {
          if (table) {
            const alt = attribs['alt'] ?? attribs['value'] ?? '';
            return void pushText(cleanText(slotText(alt, slots)), target());
          }
          flush();
          return void blocks.push(drawnBlock(name, attribs));
        }
        if (BOLD.has(name)) bold++;
        if (ITALIC.has(name)) italic++;
        if (name === 'a') links.push(safeLink(attribs['href'] ?? '') ?? links[links.length - 1]);
        if (table && nestedTables > 0) {
          if (name === 'table') nestedTables++;
          else if (name === 'tr' || name === 'br' || name === 'p' || name === 'div')
            target().push({ kind: 'break' });
          else if (name === 'td' || name === 'th') pushText(' ', target());
          return;
        }
        if (table) return openInTable(name, attribs);
        if (name === 'br') return void inlines.push({ kind: 'break' });
        if (name === 'hr') {
          flush();
          return void blocks.push({ kind: 'rule' });
        }
        if (name === 'table') {
          flush();
          table = { header: [], body: [], inHead: false, row: undefined, cell: undefined, loose: [] };
          return;
        }
        if (!BLOCKS.has(name)) return;
        flush();
        if (HEADINGS.has(name)) headings.push(name as TextRole);
        if (INDENTED.has(name)) indentExtra++;
        if (name === 'ul' || name === 'ol') {
          const start = Number.parseInt(attribs['start'] ?? '1', 10);
          lists.push({ ordered: name === 'ol', next: Number.isFinite(start) ? start : 1 });
        }
        if (name === 'li') {
          const list = lists[lists.length - 1];
          bullet = list?.ordered ? `${list.next++}.` : '\u2022';
        }
      },
      ontext(text) {
        pending += text;
      },
      onclosetag(name) {
        const closingDepth = depth--;
        processText();
        const breaks = breakAfter.pop() ?? false;
        if (name === 'title') return void (inTitle = false);
        if (name === 'style') styleDepth = Math.max(0, styleDepth - 1);
        if (DROPPED.has(name)) return void (dropDepth = Math.max(0, dropDepth - 1));
        if (dropDepth > 0) return;
        if (furniture && furniture.depth === closingDepth && (name === 'header' || name === 'footer')) {
          flush();
          furniture = undefined;
          blocks = body;
          return;
        }
        if (breaks && !table) {
          flush();
          blocks.push({ kind: 'pageBreak' });
        }
        if (BOLD.has(name)) bold = Math.max(0, bold - 1);
        if (ITALIC.has(name)) italic = Math.max(0, italic - 1);
        if (name === 'a') links.pop();
        if (table && nestedTables > 0) {
          if (name === 'table') nestedTables--;
          return;
        }
        if (table) return closeInTable(name);
        if (!BLOCKS.has(name)) return;
        flush();
        if (HEADINGS.has(name)) headings.pop();
        if (INDENTED.has(name)) indentExtra = Math.max(0, indentExtra - 1);
        if (name === 'ul' || name === 'ol') lists.pop();
        if (name === 'li') bullet = undefined;
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true, recognizeSelfClosing: true },
  );

  function openInTable(name: string, attribs: Record<string, string>): void {
    const t = table!;
    if (name === 'table') {
      if (t.cell) nestedTables++;
    } else if (name === 'thead') t.inHead = true;
    else if (name === 'tbody' || name === 'tfoot') {
      finishRow();
      t.inHead = false;
    } else if (name === 'tr') {
      finishRow();
      t.row = { cells: [], allTh: true, head: t.inHead };
    } else if (name === 'td' || name === 'th') {
      finishCell();
      if (!t.row) t.row = { cells: [], allTh: true, head: t.inHead };
      if (name === 'td') t.row.allTh = false;
      const span = Number.parseInt(attribs['colspan'] ?? '1', 10);
      t.cell = { inlines: [], colspan: Number.isFinite(span) ? Math.min(Math.max(span, 1), 64) : 1 };
    } else if (name === 'br' || BLOCKS.has(name)) {
      if (t.cell && t.cell.inlines.length > 0) t.cell.inlines.push({ kind: 'break' });
    }
  }

  function closeInTable(name: string): void {
    if (name === 'table') finishTable();
    else if (name === 'thead') {
      finishRow();
      table!.inHead = false;
    } else if (name === 'tr') finishRow();
    else if (name === 'td' || name === 'th') finishCell();
  }

  /** An `<img>`, `<qrcode>` or `<barcode>` as a block; bad attributes fail naming the element. */
  function drawnBlock(name: string, raw: Record<string, string>): Block {
    const attribs: Record<string, string> = {};
    for (const [key, value] of Object.entries(raw)) attribs[key] = slotText(value, slots);
    const align = alignOf(attribs);
    if (name === 'img') {
      const src = (attribs['src'] ?? '').trim();
      if (src === '') throw markupError('an <img> has no src; give a data: URL (PNG or JPEG) or a file URL');
      return {
        kind: 'image',
        image: {
          src,
          width: lengthOf(attribs['width'], '<img> width'),
          height: lengthOf(attribs['height'], '<img> height'),
          align,
        },
      };
    }
    const value = attribs['value'] ?? '';
    if (value === '') throw markupError(`a <${name}> has no value; give value="..."`);
    if (value.length > 2000) throw markupError(`a <${name}> value is longer than 2000 characters`);
    const type = name === 'qrcode' ? 'qrcode' : (attribs['type'] ?? 'code128').toLowerCase();
    if (type !== 'qrcode' && type !== 'code128' && type !== 'ean13')
      throw markupError(`<barcode type="${attribs['type']}"> is not supported; use code128 or ean13`);
    const size = lengthOf(attribs['size'], `<${name}> size`);
    return {
      kind: 'code',
      code: {
        type,
        value,
        width: size ?? lengthOf(attribs['width'], `<${name}> width`),
        height: size ?? lengthOf(attribs['height'], `<${name}> height`),
        align,
      },
    };
  }

  parser.write(template);
  parser.end();
  processText();
  while (table) finishTable();
  flush();
  furniture = undefined;
  blocks = body;
  // Values in <title> are text (a TABLE value leaves nothing there).
  const titleText = title === undefined ? undefined : slotText(title, slots);
  const cleanTitle = titleText === undefined ? undefined : cleanText(titleText).replace(/\s+/g, ' ').trim();
  return { blocks: body, header, footer, page: pageStyle(styleText), title: cleanTitle || undefined };
}

/** Text with its placeholders replaced by their values' text (a table gives nothing). @internal */
export function slotText(text: string, slots: readonly Slot[]): string {
  if (!text.includes('\uE000')) return text;
  return text.replace(PLACEHOLDER, (_, index: string) => {
    const value = slots[Number(index)];
    return value?.kind === 'text' ? value.text : '';
  });
}
