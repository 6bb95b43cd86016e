/**
 * Waiting between attempts and the retry loop itself; both stop at once when the signal aborts.
 * @module
 */
import { CancelledError } from '../errors/index.js';
import { backoffDelay, type RetryPolicy } from './policy.js';

/** The longest a timer waits (2^31 - 1 ms, 24.8 days): `setTimeout` fires at once for anything longer. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Waits `ms` (at most {@link MAX_TIMER_MS}); rejects with a `CancelledError` as soon as `signal` aborts.*/
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(cancelled(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(cancelled(signal));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What a failed attempt means for the next one.*/
export interface RetryVerdict {
  /** Whether another attempt may succeed. */
  retry: boolean;
  /** The server's `Retry-After`, in ms. */
  afterMs?: number;
}

/** Options of {@link withRetry}.*/
export interface WithRetryOptions {
  policy: RetryPolicy;
  /** Decides from a failure whether to try again; not called for cancellations. */
  classify: (error: unknown) => RetryVerdict;
  signal?: AbortSignal | undefined;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the attempts run out; the last error is thrown.
 * Aborting `signal` stops at once with a `CancelledError`.
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

/** The error a cancelled call rejects with: the signal's reason when it is already a `CancelledError`.*/
export function cancelled(signal: AbortSignal | undefined, cause?: unknown): CancelledError {
  const reason: unknown = signal?.reason;
  if (reason instanceof CancelledError) return reason;
  return new CancelledError('The operation was cancelled', { cause: cause ?? reason });
}
