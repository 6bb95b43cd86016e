import type { DataTable } from '../schema/data-table.js';
import type { ValueFormat, ValueFormatter } from './value-format.js';

export type { ValueFormat } from './value-format.js';

/** The type a `create_pdf` variable declares for its value. */
export type PdfValueType = 'NUMBER' | 'STRING' | 'TABLE' | 'BOOLEAN' | 'DATE' | 'LIST' | 'OBJECT';

/** A value placed in the template where the marker `[[.name]]` stands. */
export interface PdfVariable {
  /** Name used in the marker `[[.name]]`. */
  name: string;
  /** Declared type; the value must match it. */
  value_type: PdfValueType;
  /**
   * `NUMBER`: a finite number (or a numeric string); `STRING`: a string; `BOOLEAN`: a boolean;
   * `DATE`: an ISO 8601 string, a `Date` or epoch milliseconds; `TABLE`: a data table
   * `{ columns, rows }`; `LIST`: an array (of objects, for `[[#name]]...[[/name]]` sections);
   * `OBJECT`: an object (its fields by dotted names, `[[name.field]]`). `null` prints nothing.
   */
  value: unknown;
  /**
   * How a `NUMBER` or `DATE` prints (`Intl` options plus `locale`). On a `TABLE`: formats by column
   * name (`{ "Amount": { "style": "currency", "currency": "EUR" } }`), for tables that come from a read;
   * a column object may also hold its own `format`.
   */
  format?: ValueFormat | Record<string, ValueFormat>;
  /** `TABLE` only: names of columns summed (exactly, in decimal) in a totals row under the table. */
  totals?: string[];
}

/** Input of {@link renderPdf}: the `input_data` of a `create_pdf` step. */
export interface RenderPdfInput {
  /** HTML-subset template text with `[[.name]]` markers. */
  template: string;
  /** Template language; only `html`. @default 'html' */
  template_type?: 'html';
  /** Values for the markers. */
  variables?: PdfVariable[];
}

/** Page margins in PDF points (1/72 inch). */
export interface PageMargins {
  /** Space above the text area. */
  top: number;
  /** Space right of the text area. */
  right: number;
  /** Space below the text area. */
  bottom: number;
  /** Space left of the text area. */
  left: number;
}

/** Options of {@link renderPdf}. */
export interface RenderPdfOptions {
  /** Cancels the render; checked between pages. */
  signal?: AbortSignal;
  /** Largest PDF allowed, in bytes; a bigger one throws `LimitError('pdf.maxBytes')`. @default 10485760 (10 MiB) */
  maxBytes?: number;
  /**
   * Reads an `<img src>` that is not a `data:` URL (a file store's `file_url`); resolves undefined
   * when it has no such file. Without it, only `data:` URLs are drawn. Remote URLs are never fetched.
   */
  images?: (src: string) => Promise<Uint8Array | undefined>;
  /** Page geometry; a template's `@page` rule takes precedence. */
  page?: {
    /** `'A4'`, `'Letter'` or `[width, height]` in points. @default 'A4' */
    size?: 'A4' | 'Letter' | [number, number];
    /** One number for all sides or each side, in points. @default 48 */
    margins?: number | PageMargins;
  };
}

/** Options with every default filled in. @internal */
export interface NormalizedPdfOptions {
  signal: AbortSignal | undefined;
  images: RenderPdfOptions['images'];
  maxBytes: number;
  width: number;
  height: number;
  margins: PageMargins;
}

/**
 * A checked `TABLE` value: the data table, a formatter per column (from the column's `format`) and,
 * with `totals`, the exact decimal sum per summed column. @internal
 */
export interface PdfTable {
  table: DataTable;
  formats: (ValueFormatter | undefined)[];
  totals: (string | undefined)[] | undefined;
}

/** An inline piece of a text block or table cell. @internal */
export type Inline =
  | { kind: 'text'; text: string; bold: boolean; italic: boolean; link: string | undefined }
  | { kind: 'break' }
  | { kind: 'table'; table: PdfTable };

/** Horizontal placement of an image or code block. @internal */
export type Align = 'left' | 'center' | 'right';

/** An `<img>` in the template: where its bytes come from and the size asked for (points). @internal */
export interface ImageRef {
  src: string;
  width: number | undefined;
  height: number | undefined;
  align: Align;
}

/** A `<qrcode>` or `<barcode>`: its kind, value and size asked for (points). @internal */
export interface CodeRef {
  type: 'qrcode' | 'code128' | 'ean13';
  value: string;
  width: number | undefined;
  height: number | undefined;
  align: Align;
}

/** One cell of a table block. @internal */
export interface TableCell {
  inlines: Inline[];
  colspan: number;
}

/** A table ready for layout. `numeric[c]` forces right alignment; unset columns are detected. @internal */
export interface TableBlock {
  kind: 'table';
  header: TableCell[][];
  body: TableCell[][];
  /** Rows drawn bold after the body, with a rule above (a `TABLE`'s totals). */
  footer?: TableCell[][];
  numeric: (boolean | undefined)[];
}

/** Text roles: paragraph, list item or heading level. @internal */
export type TextRole = 'p' | 'li' | 'h1' | 'h2' | 'h3' | 'h4' | 'h5' | 'h6';

/** A laid-out unit of the document. @internal */
export type Block =
  | { kind: 'text'; role: TextRole; inlines: Inline[]; indent: number; bullet: string | undefined }
  | { kind: 'rule' }
  | { kind: 'pageBreak' }
  | { kind: 'image'; image: ImageRef }
  | { kind: 'code'; code: CodeRef }
  | TableBlock;
