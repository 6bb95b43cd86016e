/**
 * Coercion of sheet cells and filter values to entity column types. One set of rules serves reading
 * a sheet, type-checking written rows and comparing filter values, so the three always agree.
 * @module
 */
import type { CellValue } from '../adapters/types.js';
import type { ColumnType } from '../schema/entity.js';

/** Result of a coercion: the typed value (`null` for an empty cell), or `ok: false` when impossible. */
export type Coerced = { ok: true; value: string | number | boolean | null } | { ok: false };

const FAIL: Coerced = { ok: false };
const NULL: Coerced = { ok: true, value: null };

/** Plain decimal syntax: optional sign, digits with an optional fraction, optional exponent. No `0x`, no `Infinity`, no thousands separators. */
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
/** Day 0 of spreadsheet serial dates (1899-12-30), in ms since 1970. */
const SERIAL_EPOCH_MS = Date.UTC(1899, 11, 30);
const DAY_MS = 86_400_000;
/** Serial number of 9999-12-31, the last date with a four-digit year. */
const MAX_SERIAL = 2_958_465;

/** True for an empty cell: `null`, `undefined`, `''` or a string of only whitespace. */
export function isEmptyCell(value: unknown): boolean {
  return (
    value === null ||
    value === undefined ||
    (typeof value === 'string' && (value === '' || value.trim() === ''))
  );
}

/**
 * Coerces a cell (or a value to write) to a column type. Empty cells are `null`. Rules:
 * `NUMBER` from finite numbers or plain decimal strings (`"12"`, `"-3.5"`, `"1e3"`, trimmed);
 * `STRING` from strings (kept as is), numbers (`String(n)`) and booleans (`"TRUE"`/`"FALSE"`);
 * `BOOLEAN` from booleans or `"true"`/`"false"` in any case; `DATE` from `YYYY-MM-DD` or a whole
 * spreadsheet serial day number; `DATETIME` from ISO 8601 text or a serial number, kept as the
 * instant in UTC, `YYYY-MM-DDTHH:MM:SS.sssZ` (as `Date#toISOString` writes it: text without a zone
 * and serial numbers are UTC, digits past the millisecond are rounded), so that equal instants are
 * equal values and the text orders as time does.
 */
export function coerceCell(type: ColumnType, value: unknown): Coerced {
  if (isEmptyCell(value)) return NULL;
  return coerceValue(type, value);
}

/**
 * Like {@link coerceCell} but for filter values: `""` and blank strings stay text (they are not empty
 * cells), `null` stays `null`.
 * @internal
 */
export function coerceValue(type: ColumnType, value: unknown): Coerced {
  if (value === null) return NULL;
  switch (type) {
    case 'NUMBER':
      if (typeof value === 'number') return Number.isFinite(value) ? { ok: true, value } : FAIL;
      if (typeof value === 'string') return parseNumber(value);
      return FAIL;
    case 'STRING':
      if (typeof value === 'string') return { ok: true, value };
      if (typeof value === 'number')
        return Number.isFinite(value) ? { ok: true, value: String(value) } : FAIL;
      if (typeof value === 'boolean') return { ok: true, value: value ? 'TRUE' : 'FALSE' };
      return FAIL;
    case 'BOOLEAN':
      if (typeof value === 'boolean') return { ok: true, value };
      if (typeof value === 'string') {
        const text = value.trim().toLowerCase();
        if (text === 'true') return { ok: true, value: true };
        if (text === 'false') return { ok: true, value: false };
      }
      return FAIL;
    case 'DATE':
      if (typeof value === 'number')
        return Number.isInteger(value) && value >= 0 && value <= MAX_SERIAL
          ? { ok: true, value: new Date(value * DAY_MS + SERIAL_EPOCH_MS).toISOString().slice(0, 10) }
          : FAIL;
      if (typeof value === 'string') return parseDate(value.trim());
      return FAIL;
    case 'DATETIME':
      if (typeof value === 'number')
        return Number.isFinite(value) && value >= 0 && value < MAX_SERIAL + 1
          ? instant(Math.round(value * DAY_MS) + SERIAL_EPOCH_MS)
          : FAIL;
      if (typeof value === 'string') return parseDateTime(value.trim());
      return FAIL;
  }
}

/**
 * The cell value to write for a coerced value (numbers, text and booleans as they are; dates as text).
 * @throws TypeError when `value` does not fit `type`: callers pass values that {@link coerceCell} accepted.
 */
export function cellFromValue(type: ColumnType, value: unknown): CellValue {
  const result = coerceCell(type, value);
  if (!result.ok)
    throw new TypeError(
      `a ${type} cell cannot hold ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`,
    );
  return result.value;
}

function parseNumber(text: string): Coerced {
  const trimmed = text.trim();
  if (!NUMERIC.test(trimmed)) return FAIL;
  const value = Number(trimmed);
  return Number.isFinite(value) ? { ok: true, value } : FAIL;
}

function validDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days =
    month === 2
      ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
        ? 29
        : 28
      : [4, 6, 9, 11].includes(month)
        ? 30
        : 31;
  return day <= days;
}

function parseDate(text: string): Coerced {
  const m = DATE.exec(text);
  if (!m || !validDay(Number(m[1]), Number(m[2]), Number(m[3]))) return FAIL;
  return { ok: true, value: text };
}

function parseDateTime(text: string): Coerced {
  const m = DATETIME.exec(text);
  if (!m || !validDay(Number(m[1]), Number(m[2]), Number(m[3]))) return FAIL;
  const [hours, minutes, seconds] = [m[4], m[5], m[6]].map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
  ];
  if (hours > 23 || minutes > 59 || seconds > 59) return FAIL;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z') {
    const digits = zone.replace(':', '');
    const zoneHours = Number(digits.slice(1, 3));
    const zoneMinutes = Number(digits.slice(3, 5));
    if (zoneHours > 23 || zoneMinutes > 59) return FAIL;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  }
  const date = new Date(0);
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3])); // years below 100 stay as written
  date.setUTCHours(hours, minutes - offsetMinutes, seconds, Math.round(Number(`0${m[7] ?? ''}`) * 1000));
  return instant(date.getTime());
}

/** The canonical `DATETIME` value of an instant, or a failure outside years 0000 to 9999. */
function instant(ms: number): Coerced {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  return year >= 0 && year <= 9999 ? { ok: true, value: date.toISOString() } : FAIL;
}
