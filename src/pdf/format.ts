import type { Column } from '../schema/data-table.js';

// Digits of other scripts that `latin_numbering` turns into ASCII: Arabic-Indic, Extended
// Arabic-Indic (Persian), Devanagari, Bengali, Thai, fullwidth.
const DIGIT_ZEROS = [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50, 0xff10];
const OTHER_DIGITS = /[\u0660-\u0669\u06f0-\u06f9\u0966-\u096f\u09e6-\u09ef\u0e50-\u0e59\uff10-\uff19]/g;

/** Replaces digits of other scripts with ASCII digits. @internal */
export function toLatinDigits(text: string): string {
  return text.replace(OTHER_DIGITS, (digit) => {
    const code = digit.charCodeAt(0);
    for (const zero of DIGIT_ZEROS) if (code >= zero && code <= zero + 9) return String(code - zero);
    return digit;
  });
}

/** Decimal places implied by a `step` (0.01 → 2, 0.5 → 1, 5 → 0); undefined when no step. @internal */
export function decimalsOfStep(step: number | undefined): number | undefined {
  if (step === undefined || !Number.isFinite(step) || step <= 0) return undefined;
  if (Number.isInteger(step)) return 0;
  const text = String(step);
  const exp = /e-(\d+)$/.exec(text);
  if (exp) return Math.min(20, Number(exp[1]) + (text.split('e')[0]!.split('.')[1]?.length ?? 0));
  return Math.min(20, text.split('.')[1]?.length ?? 0);
}

/** Formats a number with ASCII digits, no grouping, `decimals` places when given. @internal */
export function formatNumber(value: number, decimals?: number): string {
  if (!Number.isFinite(value)) return String(value);
  return decimals === undefined ? String(value) : value.toFixed(decimals);
}

/** Reads a value as a Date: a `Date`, epoch milliseconds, or a date/date-time string. @internal */
export function toDate(value: unknown): Date | undefined {
  let date: Date;
  if (value instanceof Date) date = value;
  else if (typeof value === 'number') date = new Date(value);
  else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value.trim()))
    date = new Date(value.trim());
  else return undefined;
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** `YYYY-MM-DD` (UTC) of a date; a plain `YYYY-MM-DD` string is kept as written. @internal */
export function formatDate(value: unknown): string | undefined {
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value.trim())) {
    return toDate(value) ? value.trim() : undefined;
  }
  const date = toDate(value);
  return date ? date.toISOString().slice(0, 10) : undefined;
}

/** `YYYY-MM-DD HH:mm` (UTC) of a date-time. @internal */
export function formatDateTime(value: unknown): string | undefined {
  const date = toDate(value);
  if (!date) return undefined;
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** Text of any value that has no column config: strings as is, objects as JSON, null empty. @internal */
export function plainText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof Date) return formatDateTime(value) ?? '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

/** Whether a column holds numbers (declared `number` type or config). @internal */
export function isNumberColumn(column: Column | undefined): boolean {
  return column !== undefined && (column.number !== undefined || column.type?.toLowerCase() === 'number');
}

/** Text of a table cell following its column's configuration. @internal */
export function formatCell(value: unknown, column: Column | undefined): string {
  if (value === null || value === undefined) return '';
  if (column?.number !== undefined || column?.type?.toLowerCase() === 'number') {
    const decimals = decimalsOfStep(column.number?.step);
    let text: string;
    if (typeof value === 'number') text = formatNumber(value, decimals);
    else {
      text = plainText(value);
      const parsed = Number(toLatinDigits(text).trim());
      if (decimals !== undefined && text.trim() !== '' && Number.isFinite(parsed))
        text = parsed.toFixed(decimals);
    }
    return column.number?.latin_numbering === false ? text : toLatinDigits(text);
  }
  if (column?.date !== undefined || column?.type?.toLowerCase() === 'date')
    return formatDate(value) ?? plainText(value);
  if (column?.datetime !== undefined || column?.type?.toLowerCase() === 'datetime') {
    return formatDateTime(value) ?? plainText(value);
  }
  return plainText(value);
}

/** A URL safe to put in a link annotation (http, https or mailto), else undefined. @internal */
export function safeLink(text: string): string | undefined {
  const url = text.trim();
  if (!/^(https?:\/\/|mailto:)[^\s]+$/i.test(url)) return undefined;
  try {
    return url.replace(/[^\x21-\x7e]/gu, (char) => encodeURIComponent(char));
  } catch {
    return undefined;
  }
}
