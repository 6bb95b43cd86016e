/**
 * When and how long to wait before trying a request again.
 * @module
 */
import type { RequestRetryOptions } from './types.js';

/** Statuses worth another try: 408, 429 and every 5xx. Other 4xx mean the request itself is wrong. @internal */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** A `Retry-After` header (seconds or an HTTP date) in ms from `now`, or `undefined` when absent or unreadable. @internal */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Delay before retry number `retry` (1 for the first retry): the server's `Retry-After` when given,
 * else full jitter over `baseMs * 2^(retry-1)`; both capped at `capMs`. @internal
 */
export function retryDelay(
  retry: number,
  options: RequestRetryOptions,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, options.capMs);
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. @internal */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
