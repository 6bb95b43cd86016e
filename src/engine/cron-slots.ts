/**
 * Cron slots: the instants a standard five-field cron names in a time zone. Computed here, by local
 * calendar days, rather than by a cron library, so short months, leap days and the days the clock
 * changes follow one written rule (docs/semantics.md, "Schedules on the days the clock changes"):
 * a local time the clock skips fires when the clock jumps; a local time the clock passes twice fires
 * at its first pass, and at the second too when the minute or hour field starts with `*`.
 * @module
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Names a cron field may hold besides numbers: months in the fourth, weekdays in the fifth. */
const CRON_NAMES = [
  [],
  [],
  [],
  ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
];
const CRON_FIELDS = ['minute', 'hour', 'day of month', 'month', 'day of week'];
/** Per field: the least and the greatest value (a weekday 7 is Sunday, as 0 is). */
const CRON_RANGES = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
] as const;
/** Per field: one list item, `*` or a value or a range, with an optional `/step`. */
const CRON_ITEMS = CRON_NAMES.map((names) => {
  const value = names.length > 0 ? `(\\d+|${names.join('|')})` : '(\\d+)';
  return new RegExp(`^(?:(\\*)|${value}(?:-${value})?)(?:/(\\d+))?$`, 'i');
});
/** The most days each month has (February in a leap year). */
const MONTH_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Why a cron is not standard five-field cron, or `undefined`: each field a list of `*`, values or
 * ranges, each with an optional `/step`; values are numbers, or names of months and weekdays. The
 * extensions some cron libraries read (`@daily`, `L`, `W`, `#`, `?`, seconds) are refused: other
 * cron implementations read them differently or not at all. The message quotes the item as written.
 */
export function cronSyntaxProblem(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return `it has ${fields.length} field${fields.length === 1 ? '' : 's'}`;
  for (let f = 0; f < 5; f++)
    for (const item of fields[f]!.split(',')) {
      const problem = cronItemProblem(item, f);
      if (problem !== undefined) return `the ${CRON_FIELDS[f]} field has "${item}"${problem}`;
    }
  return undefined;
}

/** What is wrong with one list item of field `f` (after a colon), `''` when it is no cron item at all. */
function cronItemProblem(item: string, f: number): string | undefined {
  const match = CRON_ITEMS[f]!.exec(item);
  if (!match) return '';
  const [, star, from, to, step] = match;
  const [least, most] = CRON_RANGES[f]!;
  for (const [text, end] of [
    [from, false],
    [to, true],
  ] as const) {
    if (text === undefined) continue;
    const value = valueOf(text, f, end);
    if (!(value >= least && value <= most)) return `: ${text} is not from ${least} to ${most}`;
  }
  if (from !== undefined && to !== undefined && valueOf(from, f, false) > valueOf(to, f, true))
    return ': the range runs backwards';
  if (step === undefined) return undefined;
  if (star === undefined && to === undefined) return ': a step follows "*" or a range';
  const span = f === 4 ? 7 : most - least + 1;
  if (!(Number(step) >= 1 && Number(step) <= span)) return `: the step must be from 1 to ${span}`;
  return undefined;
}

/** The number a value of field `f` stands for; SUN ending a range is 7, so SAT-SUN is two days. */
function valueOf(text: string, f: number, end: boolean): number {
  const named = CRON_NAMES[f]!.indexOf(text.toUpperCase());
  if (named < 0) return Number(text);
  return f === 4 && named === 0 && end ? 7 : named + (f === 3 ? 1 : 0);
}

/** The values a field names, as flags by value (weekday 7 folded onto 0). */
function valuesOf(field: string, f: number): boolean[] {
  const [least, most] = CRON_RANGES[f]!;
  const values = new Array<boolean>(most + 1).fill(false);
  for (const item of field.split(',')) {
    const [, star, from, to, step] = CRON_ITEMS[f]!.exec(item)!;
    const first = star !== undefined ? least : valueOf(from!, f, false);
    const last = star !== undefined ? (f === 4 ? 6 : most) : to !== undefined ? valueOf(to, f, true) : first;
    for (let v = first; v <= last; v += step === undefined ? 1 : Number(step)) values[v] = true;
  }
  if (f === 4 && values[7]) values[0] = true;
  return values;
}

/**
 * A schedule's cron in its time zone: which instants are its slots. A day matches when its month is
 * listed and its day of month or weekday is: both must match when either field is `*`, either one
 * when both are restricted (standard cron). The slots of a day are its listed local times, each
 * placed in the zone as the module comment says.
 */
export class CronSchedule {
  /** False when the cron names no real date (`0 0 31 4,6,9,11 *`): it never fires. */
  readonly fires: boolean;
  readonly #zone: string;
  readonly #times: number[];
  readonly #months: boolean[];
  readonly #days: boolean[];
  readonly #weekdays: boolean[];
  /** Day of month or weekday (both restricted), rather than both (one of them `*`). */
  readonly #either: boolean;
  /** Minute or hour field starts with `*`: a local time passed twice fires at both passes. */
  readonly #byTheClock: boolean;

  /** @throws a `TypeError` when `cron` is not standard five-field cron ({@link cronSyntaxProblem}). */
  constructor(cron: string, zone = 'UTC') {
    const problem = cronSyntaxProblem(cron);
    if (problem !== undefined) throw new TypeError(`"${cron}" is not a five-field cron: ${problem}`);
    const fields = cron.trim().split(/\s+/);
    const [minutes, hours, days, months, weekdays] = fields.map((field, f) => valuesOf(field, f)) as [
      boolean[],
      boolean[],
      boolean[],
      boolean[],
      boolean[],
    ];
    this.#zone = zone;
    this.#times = [];
    hours.forEach((h, hour) => {
      if (h) minutes.forEach((m, minute) => m && this.#times.push(hour * HOUR + minute * MINUTE));
    });
    this.#months = months;
    this.#days = days;
    this.#weekdays = weekdays;
    this.#either = fields[2] !== '*' && fields[4] !== '*';
    this.#byTheClock = fields[0]!.startsWith('*') || fields[1]!.startsWith('*');
    // Any restricted weekday comes round every month; otherwise some listed month must have the day.
    this.fires =
      fields[4] !== '*' ||
      months.some((listed, month) => listed && days.some((d, day) => d && day <= MONTH_DAYS[month]!));
  }

  /** The latest slot at or before `now` and after `after` (epoch ms), or undefined when there is none. */
  latest(now: number, after: number): number | undefined {
    if (!this.fires) return undefined;
    // A slot's instant is within 14 hours of its local day (plus a clock change): scan a day either side.
    const last = startOfDay(after) - 2 * DAY;
    let best: number | undefined;
    let bestDay: number | undefined;
    for (let day = startOfDay(now + offsetAt(this.#zone, now)) + DAY; day >= last; day -= DAY) {
      if (bestDay !== undefined && day < bestDay - DAY) break;
      if (!this.#matches(day)) continue;
      for (const slot of this.#slotsOf(day))
        if (slot <= now && slot > after && (best === undefined || slot > best)) best = slot;
      if (best !== undefined) bestDay ??= day;
    }
    return best;
  }

  /** The first slot after `from` (now by default), or null when the cron never fires. */
  nextRun(from: Date = new Date()): Date | null {
    if (!this.fires) return null;
    const at = from.getTime();
    const first = startOfDay(at + offsetAt(this.#zone, at)) - DAY;
    // A listed date comes within 8 years (Feb 29 skips 2100); a weekday within a week.
    let best: number | undefined;
    let bestDay: number | undefined;
    for (let day = first; day <= first + 9 * 366 * DAY; day += DAY) {
      if (bestDay !== undefined && day > bestDay + DAY) break;
      if (!this.#matches(day)) continue;
      for (const slot of this.#slotsOf(day))
        if (slot > at && (best === undefined || slot < best)) best = slot;
      if (best !== undefined) bestDay ??= day;
    }
    return best === undefined ? null : new Date(best);
  }

  /** Whether the local day starting at `day` (its date read as UTC) is one the cron names. */
  #matches(day: number): boolean {
    const date = new Date(day);
    if (!this.#months[date.getUTCMonth() + 1]) return false;
    const byDay = this.#days[date.getUTCDate()]!;
    const byWeekday = this.#weekdays[date.getUTCDay()]!;
    return this.#either ? byDay || byWeekday : byDay && byWeekday;
  }

  /** The instants of the cron's local times on `day`, ascending, each once. */
  #slotsOf(day: number): number[] {
    // Offsets run from -12 to +14 hours: these bound every instant of the local day and a change near it.
    const from = day - 15 * HOUR;
    const to = day + 39 * HOUR;
    const before = offsetAt(this.#zone, from);
    const after = offsetAt(this.#zone, to);
    const change = before === after ? undefined : changeBetween(this.#zone, from, to, before);
    const slots: number[] = [];
    for (const time of this.#times) {
      const local = day + time;
      if (change === undefined) {
        slots.push(local - before);
        continue;
      }
      const first = local - before;
      const second = local - after;
      const firstPass = first < change;
      const secondPass = second >= change;
      if (firstPass) slots.push(first);
      if (secondPass && (!firstPass || this.#byTheClock)) slots.push(second);
      // Skipped by the clock jumping forward: fires when it jumps.
      if (!firstPass && !secondPass) slots.push(change);
    }
    return [...new Set(slots)].sort((a, b) => a - b);
  }
}

/** The start (00:00) of the day `local` is in, read as UTC. */
function startOfDay(local: number): number {
  return Math.floor(local / DAY) * DAY;
}

/** The first whole minute after `from` and at most `to` whose offset is no longer `before`. */
function changeBetween(zone: string, from: number, to: number, before: number): number {
  let lo = Math.floor(from / MINUTE) * MINUTE;
  let hi = Math.ceil(to / MINUTE) * MINUTE;
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
    if (offsetAt(zone, mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `instant`, in ms: its local time, read as UTC, minus the instant. */
function offsetAt(zone: string, instant: number): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 0;
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, format);
  }
  const part: Record<string, string> = {};
  for (const { type, value } of format.formatToParts(instant)) part[type] = value;
  const year = part['era'] === 'BC' ? 1 - Number(part['year']) : Number(part['year']);
  const local = new Date(0);
  local.setUTCFullYear(year, Number(part['month']) - 1, Number(part['day']));
  local.setUTCHours(Number(part['hour']) % 24, Number(part['minute']), Number(part['second']));
  return local.getTime() - Math.floor(instant / 1000) * 1000;
}
