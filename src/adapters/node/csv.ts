/**
 * CSV text to rows of cells and back, on csv-parse and csv-stringify: one set of rules for project
 * seed sheets and for `FileSpreadsheets`.
 * @module
 */
import { CsvError, parse, type CastingFunction } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { ValidationError } from '../../errors/index.js';
import type { CellValue } from '../types.js';

/**
 * Parses CSV text (RFC 4180): quoted fields may hold commas, newlines and `""` for a quote; every
 * CRLF, LF or CR outside quotes ends a row, so one file may mix them; a leading byte-order mark is
 * skipped; the last line end is optional; rows may have different lengths; a blank line is a row of
 * one empty field.
 * @throws `ValidationError` (code `invalid_csv`, path `line N`) for a quote left open, text after a
 * closing quote, or a quote inside a field that does not start with one.
 */
export function parseCsv(text: string): string[][] {
  return parseRecords(text, (value) => value) as string[][];
}

/**
 * Parses CSV text into typed cells, the inverse of {@link writeCsvCells}: an empty field is `null`;
 * a quoted field is always text; an unquoted field is a number when it is a number's canonical text
 * (`12`, `-3.5`, `0.1`, `1e+21`: what `String(n)` gives), a boolean when it is `TRUE` or `FALSE`, and
 * text otherwise (`007`, `1.50`, `true` stay text; the entity's column types coerce them).
 * @throws `ValidationError` as {@link parseCsv}.
 * @internal
 */
export function readCsvCells(text: string): CellValue[][] {
  return parseRecords(text, (value, context) => (context.quoting ? value || null : typedCell(value)));
}

/** How a CSV file is laid out, kept when it is written back. @internal */
export interface CsvLayout {
  /** Starts with a UTF-8 byte-order mark (as Excel writes "CSV UTF-8"). */
  bom: boolean;
  /** Line end between rows. */
  lineEnd: '\n' | '\r\n' | '\r';
}

/**
 * The layout of existing CSV text: its byte-order mark and the line end of its first row (a line break
 * inside a quoted field does not count); new files get LF and no byte-order mark. @internal
 */
export function csvLayout(text: string): CsvLayout {
  let quoted = false;
  let lineEnd: CsvLayout['lineEnd'] = '\n';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) {
      lineEnd = c === '\n' ? '\n' : text[i + 1] === '\n' ? '\r\n' : '\r';
      break;
    }
  }
  return { bom: text.charCodeAt(0) === 0xfeff, lineEnd };
}

/**
 * CSV text of rows of cells: numbers as `String(n)`, booleans as `TRUE`/`FALSE`, `null` and `""` as
 * empty fields. Text is quoted when it holds a comma, quote or line break, and also when it would
 * otherwise read back as another type (`"42"`, `"TRUE"`), so {@link readCsvCells} returns what was
 * written. Text starting with `=` is written as it is: CSV has no formulas.
 * @internal
 */
export function writeCsvCells(rows: readonly (readonly CellValue[])[], layout: CsvLayout): string {
  const body = stringify(
    rows.map((row) => row.map((cell) => (cell === '' ? null : cell))),
    {
      record_delimiter: layout.lineEnd,
      cast: {
        boolean: (value) => (value ? 'TRUE' : 'FALSE'),
        number: (value) => String(value),
        string: (value) =>
          /[\r\n]/.test(value) || typedCell(value) !== value ? { value, quoted: true } : value,
      },
    },
  );
  return (layout.bom ? '\uFEFF' : '') + body;
}

/** The typed value of an unquoted field. */
function typedCell(text: string): CellValue {
  if (text === '') return null;
  if (text === 'TRUE') return true;
  if (text === 'FALSE') return false;
  const number = Number(text);
  return Number.isFinite(number) && String(number) === text ? number : text;
}

function parseRecords<T>(text: string, cast: CastingFunction): T[][] {
  let recordEnd = 0;
  try {
    return parse(text, {
      bom: true,
      // Every line end ends a row, whatever the first line used: lines a person appends to a CRLF file
      // with LF would otherwise join the row above, a line break inside its last cell. CRLF is tried
      // first, so it counts as one line end, not two.
      record_delimiter: ['\r\n', '\n', '\r'],
      relax_column_count: true,
      cast,
      on_record: (record: string[], context) => {
        recordEnd = context.bytes;
        return record;
      },
    }) as T[][];
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // csv-parse counts a CRLF inside quotes as two lines; count line breaks up to the error instead:
    // `bytes` ends at the last whole field, which is on the error's line unless the error is in the
    // first field of a record, and then the end of the last whole record is.
    const bytes = new TextEncoder().encode(text);
    const line = (end: number) =>
      (new TextDecoder().decode(bytes.subarray(0, end)).match(/\r\n|\r|\n/g)?.length ?? 0) + 1;
    const at = Math.max(line((error as CsvError & { bytes?: number }).bytes ?? 0), line(recordEnd));
    throw new ValidationError([{ code: 'invalid_csv', path: `line ${at}`, message: reason(error) }]);
  }
}

/** The sentence for a csv-parse error, in the words of a person editing the file. */
function reason(error: CsvError): string {
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field is not closed';
    case 'CSV_INVALID_CLOSING_QUOTE': {
      const got = /got "(.*?)" at line/.exec(error.message)?.[1];
      return `unexpected ${got === undefined ? 'text' : JSON.stringify(got)} after a closing quote`;
    }
    case 'INVALID_OPENING_QUOTE':
      return 'a quote inside a field that does not start with one: quote the whole field and double its quotes';
    default:
      return error.message;
  }
}
