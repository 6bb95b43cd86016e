/**
 * Retries with exponential backoff and full jitter, shared by the chat and Google adapters.
 * Edge-safe: timers and `AbortSignal` only.
 * @module
 */
import { CancelledError } from '../../errors/index.js';

/** How an adapter retries answers worth another try (429 and 5xx). */
export interface RetryOptions {
  /**
   * Attempts in all, the first included; `1` turns retries off.
   * @default 5
   */
  attempts?: number;
  /**
   * Base delay in ms; retry `n` waits a random time in `[0, baseMs * 2^(n-1))`.
   * @default 500
   */
  baseMs?: number;
  /**
   * Longest wait in ms between two attempts, also for a server's `Retry-After`.
   * @default 30000
   */
  capMs?: number;
}

/** {@link RetryOptions} with every default filled in. @internal */
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  capMs: number;
}

/** What a failed attempt means for the next one. @internal */
export interface RetryVerdict {
  /** Whether another attempt may succeed. */
  retry: boolean;
  /** The server's `Retry-After`, in ms. */
  afterMs?: number;
}

/** Fills in the defaults and checks the values; a wrong value throws a `TypeError` naming the option. @internal */
export function normalizeRetry(options: RetryOptions | undefined, name = 'retry'): RetryPolicy {
  const policy = {
    attempts: options?.attempts ?? 5,
    baseMs: options?.baseMs ?? 500,
    capMs: options?.capMs ?? 30_000,
  };
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) {
    throw new TypeError(
      `${name}.attempts must be a whole number of at least 1, got ${String(policy.attempts)}`,
    );
  }
  for (const key of ['baseMs', 'capMs'] as const) {
    if (!Number.isFinite(policy[key]) || policy[key] < 0) {
      throw new TypeError(`${name}.${key} must be a number of ms of at least 0, got ${String(policy[key])}`);
    }
  }
  return policy;
}

/** A `Retry-After` value (seconds or an HTTP date) in ms from `now`; `undefined` when absent or unreadable. @internal */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Wait before retry number `retry` (1 for the first): the server's `Retry-After` when given, else full
 * jitter over `baseMs * 2^(retry-1)`; both capped at `capMs`. @internal
 */
export function backoffDelay(
  retry: number,
  policy: RetryPolicy,
  afterMs?: number,
  random: () => number = Math.random,
): number {
  if (afterMs !== undefined) return Math.min(afterMs, policy.capMs);
  return Math.floor(random() * Math.min(policy.capMs, policy.baseMs * 2 ** (retry - 1)));
}

/** Waits `ms`; rejects with a `CancelledError` as soon as `signal` aborts. @internal */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(cancelled(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(cancelled(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Options of {@link withRetry}. @internal */
export interface WithRetryOptions {
  policy: RetryPolicy;
  /** Decides from a failure whether to try again; not called for cancellations. */
  classify: (error: unknown) => RetryVerdict;
  signal?: AbortSignal | undefined;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the attempts run out; the last error is thrown.
 * Aborting `signal` stops at once with a `CancelledError`. @internal
 */
export async function withRetry<T>(
  attempt: (index: number) => Promise<T>,
  options: WithRetryOptions,
): Promise<T> {
  for (let index = 0; ; index++) {
    if (options.signal?.aborted) throw cancelled(options.signal);
    try {
      return await attempt(index);
    } catch (error) {
      if (options.signal?.aborted) throw cancelled(options.signal, error);
      const verdict = options.classify(error);
      if (!verdict.retry || index + 1 >= options.policy.attempts) throw error;
      await sleep(backoffDelay(index + 1, options.policy, verdict.afterMs), options.signal);
    }
  }
}

/** The error a cancelled call rejects with: the signal's reason when it is already a `CancelledError`. @internal */
export function cancelled(signal: AbortSignal | undefined, cause?: unknown): CancelledError {
  const reason: unknown = signal?.reason;
  if (reason instanceof CancelledError) return reason;
  return new CancelledError('The operation was cancelled', { cause: cause ?? reason });
}
