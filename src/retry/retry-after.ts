/**
 * The one reader of `Retry-After` headers. HTTP defines the header as either a number of seconds or an
 * HTTP date in one of three formats (the preferred IMF-fixdate, RFC 850 and asctime). Anything else is
 * refused rather than guessed: `Date.parse` alone reads `"1.5"` or `"2"` as calendar dates in the past,
 * which turned a server's "wait 1.5 s" into "retry now".
 * @module
 */

const SECONDS = /^\d+(?:\.\d+)?$/;
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** `Sun, 06 Nov 1994 08:49:37 GMT` (the preferred form), `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`. */
const HTTP_DATES = [
  new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`),
  new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`),
  new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`),
];

/**
 * A `Retry-After` value in ms from `now`: whole or decimal seconds, or an HTTP date (a date in the past
 * is 0). `undefined` when the header is absent or is neither.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (SECONDS.test(text)) {
    const ms = Math.round(Number(text) * 1000);
    return Number.isFinite(ms) ? ms : undefined;
  }
  if (!HTTP_DATES.some((format) => format.test(text))) return undefined;
  // asctime dates carry no zone: they are GMT.
  const date = Date.parse(text.endsWith('GMT') ? text : `${text} GMT`);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
