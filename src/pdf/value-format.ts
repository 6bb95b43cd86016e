import type { Issue } from '../errors/index.js';
import { toDate } from './format.js';

/**
 * How a number or a date prints: `Intl.NumberFormat` or `Intl.DateTimeFormat` options plus `locale`.
 * Dates print in UTC unless `timeZone` is given.
 * @example { locale: 'de-DE', style: 'currency', currency: 'EUR' } // 1.234,50 €
 * @example { locale: 'en-GB', dateStyle: 'long' } // 31 January 2026
 */
export interface ValueFormat {
  /** BCP 47 locale, e.g. `en-US`, `de-DE`. @default 'en-US' */
  locale?: string;
  /** Number style: `decimal`, `currency`, `percent` or `unit`. */
  style?: 'decimal' | 'currency' | 'percent' | 'unit';
  /** ISO 4217 currency code, with `style: 'currency'`. */
  currency?: string;
  /** Fewest digits after the decimal point. */
  minimumFractionDigits?: number;
  /** Most digits after the decimal point. */
  maximumFractionDigits?: number;
  /** Group thousands (`1,234`). @default true */
  useGrouping?: boolean;
  /** Date style: `full`, `long`, `medium` or `short`. */
  dateStyle?: 'full' | 'long' | 'medium' | 'short';
  /** Time style: `full`, `long`, `medium` or `short`. */
  timeStyle?: 'full' | 'long' | 'medium' | 'short';
  /** IANA time zone of dates. @default 'UTC' */
  timeZone?: string;
  /** Any other `Intl.NumberFormat` / `Intl.DateTimeFormat` option. */
  [option: string]: unknown;
}

/** Turns a value into its text, or undefined when the value is not of the formatter's kind. @internal */
export interface ValueFormatter {
  kind: 'number' | 'date';
  format(value: unknown): string | undefined;
}

const DATE_KEYS = new Set([
  'dateStyle',
  'timeStyle',
  'weekday',
  'era',
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'second',
  'timeZoneName',
  'hour12',
  'hourCycle',
  'dayPeriod',
  'fractionalSecondDigits',
]);

/** A number, or a numeric string kept exact (Intl formats decimal strings without float rounding). */
function numeric(value: unknown): number | string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return value.trim();
  return undefined;
}

/**
 * Builds a formatter from a `format` object, checking it once (an option Intl refuses becomes an
 * issue at `path`). `kind` picks number or date; `auto` is date when a date option is given.
 * @internal
 */
export function makeFormatter(
  format: unknown,
  kind: 'number' | 'date' | 'auto',
  path: string,
  issues: Issue[],
  owner: string,
): ValueFormatter | undefined {
  if (format === undefined || format === null) return undefined;
  if (typeof format !== 'object' || Array.isArray(format)) {
    issues.push({
      code: 'invalid_type',
      path,
      message: `${owner}: format must be an object of Intl options, e.g. { "style": "currency", "currency": "EUR" }`,
    });
    return undefined;
  }
  const { locale = 'en-US', ...options } = format as Record<string, unknown>;
  const dateLike = Object.keys(options).some((key) => DATE_KEYS.has(key));
  const chosen = kind === 'auto' ? (dateLike ? 'date' : 'number') : kind;
  try {
    if (typeof locale !== 'string') throw new RangeError('locale must be a string such as "en-US"');
    if (chosen === 'date') {
      const formatter = new Intl.DateTimeFormat(locale, {
        timeZone: 'UTC',
        ...(options as Intl.DateTimeFormatOptions),
      });
      return {
        kind: 'date',
        format: (value) => {
          const date = toDate(value);
          return date ? formatter.format(date) : undefined;
        },
      };
    }
    const formatter = new Intl.NumberFormat(locale, options as Intl.NumberFormatOptions);
    return {
      kind: 'number',
      format: (value) => {
        const n = numeric(value);
        return n === undefined ? undefined : formatter.format(n as number);
      },
    };
  } catch (error) {
    issues.push({
      code: 'invalid_value',
      path,
      message: `${owner}: format is not valid: ${(error as Error).message}`,
    });
    return undefined;
  }
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

/** A decimal as digits and a scale (`12.34` → 1234n, 2); undefined when not a finite number. @internal */
export function parseDecimal(value: unknown): { units: bigint; scale: number } | undefined {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    text = String(value);
  } else if (typeof value === 'string') text = value.trim();
  else return undefined;
  const match = DECIMAL.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return undefined;
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const exp = Number(exponent);
  if (Math.abs(exp) > 400) return undefined;
  let digits = whole + fraction;
  let scale = fraction.length - exp;
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  const units = BigInt(digits === '' ? '0' : digits);
  return { units: sign === '-' ? -units : units, scale };
}

/**
 * Adds numbers exactly, in decimal (`0.1 + 0.2` is `0.3`). Cells that are not numbers are skipped.
 * @returns the sum as a decimal string, e.g. `"0.3"`.
 * @internal
 */
export function decimalSum(values: Iterable<unknown>): string {
  let total = 0n;
  let scale = 0;
  for (const value of values) {
    const parsed = parseDecimal(value);
    if (!parsed) continue;
    if (parsed.scale > scale) {
      total *= 10n ** BigInt(parsed.scale - scale);
      scale = parsed.scale;
    }
    total += parsed.units * 10n ** BigInt(scale - parsed.scale);
  }
  const negative = total < 0n;
  let digits = (negative ? -total : total).toString().padStart(scale + 1, '0');
  if (scale > 0) {
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`.replace(/\.?0+$/, '');
  }
  return (negative && digits !== '0' ? '-' : '') + digits;
}
