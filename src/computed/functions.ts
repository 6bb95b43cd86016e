/**
 * The functions expressions may call beyond CEL's operators and its `size`, `int`, `double`,
 * `string`, `contains`, `startsWith`, `endsWith`, `substring` and `indexOf`: a small set for text,
 * numbers and dates. Each runs in time linear in its arguments. Dates are CEL timestamps, read in UTC.
 * @module
 */

/** One function: its CEL signature and what it computes. @internal */
export interface ExpressionFunction {
  name: string;
  signature: string;
  handler: (...args: never[]) => unknown;
}

const DAY_MS = 86_400_000;
const TS = 'google.protobuf.Timestamp';

/** A CEL integer as a JavaScript number. @internal */
export function numberOf(value: bigint): number {
  return Number(value);
}

function round(x: number, digits: number): number {
  const scale = 10 ** Math.max(0, Math.min(15, digits));
  // Half away from zero, as spreadsheets round.
  return (Math.sign(x) * Math.round(Math.abs(x) * scale)) / scale;
}

function utcDay(date: Date): number {
  return Math.floor(date.getTime() / DAY_MS);
}

function dateOf(text: string): Date {
  const date = new Date(text.length === 10 ? `${text}T00:00:00.000Z` : text);
  if (Number.isNaN(date.getTime()))
    throw new Error(`date(): ${JSON.stringify(text.slice(0, 40))} is no date`);
  return date;
}

/** The documented function set. @internal */
export const FUNCTION_TABLE: readonly ExpressionFunction[] = [
  // Text
  { name: 'lower', signature: 'lower(string): string', handler: (s: string) => s.toLowerCase() },
  { name: 'upper', signature: 'upper(string): string', handler: (s: string) => s.toUpperCase() },
  { name: 'trim', signature: 'trim(string): string', handler: (s: string) => s.trim() },
  {
    name: 'replace',
    signature: 'replace(string, string, string): string',
    handler: (s: string, from: string, to: string) => (from === '' ? s : s.split(from).join(to)),
  },
  // Numbers
  { name: 'abs', signature: 'abs(double): double', handler: (x: number) => Math.abs(x) },
  { name: 'floor', signature: 'floor(double): double', handler: (x: number) => Math.floor(x) },
  { name: 'ceil', signature: 'ceil(double): double', handler: (x: number) => Math.ceil(x) },
  { name: 'round', signature: 'round(double): double', handler: (x: number) => round(x, 0) },
  {
    name: 'round',
    signature: 'round(double, int): double',
    handler: (x: number, digits: bigint) => round(x, Number(digits)),
  },
  {
    name: 'min',
    signature: 'min(double, double): double',
    handler: (a: number, b: number) => Math.min(a, b),
  },
  {
    name: 'max',
    signature: 'max(double, double): double',
    handler: (a: number, b: number) => Math.max(a, b),
  },
  // Dates
  { name: 'date', signature: `date(string): ${TS}`, handler: (s: string) => dateOf(s) },
  { name: 'year', signature: `year(${TS}): int`, handler: (d: Date) => BigInt(d.getUTCFullYear()) },
  { name: 'month', signature: `month(${TS}): int`, handler: (d: Date) => BigInt(d.getUTCMonth() + 1) },
  { name: 'day', signature: `day(${TS}): int`, handler: (d: Date) => BigInt(d.getUTCDate()) },
  { name: 'weekday', signature: `weekday(${TS}): int`, handler: (d: Date) => BigInt(d.getUTCDay()) },
  {
    name: 'addDays',
    signature: `addDays(${TS}, int): ${TS}`,
    handler: (d: Date, n: bigint) => new Date(d.getTime() + Number(n) * DAY_MS),
  },
  {
    name: 'daysBetween',
    signature: `daysBetween(${TS}, ${TS}): int`,
    handler: (a: Date, b: Date) => BigInt(utcDay(b) - utcDay(a)),
  },
];
