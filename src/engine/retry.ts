import {
  CancelledError,
  LimitError,
  NonRetryableError,
  ScriptError,
  UpstreamError,
  ValidationError,
  isStepwireError,
} from '../errors/index.js';
import type { Step, StepRetry } from '../schema/index.js';

/** How often and how long apart a step is tried. @internal */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** Delay before the first retry, in ms; doubles each retry. */
  baseMs: number;
  /** Longest delay, in ms. */
  capMs: number;
}

/** One attempt, no retry. @internal */
export const NO_RETRY: RetryPolicy = { attempts: 1, baseMs: 0, capMs: 0 };

/** A step's `retry` with its defaults filled in: first delay 1 s, longest 30 s. @internal */
export function retryPolicy(retry: StepRetry): RetryPolicy {
  return {
    attempts: retry.attempts,
    baseMs: retry.backoff_ms ?? 1000,
    capMs: retry.max_backoff_ms ?? 30_000,
  };
}

/** Whether trying a failed step again may help. @internal */
export function isRetryable(error: unknown, _step: Step): boolean {
  if (
    error instanceof NonRetryableError ||
    error instanceof ValidationError ||
    error instanceof CancelledError ||
    error instanceof ScriptError ||
    error instanceof LimitError
  )
    return false;
  if (error instanceof UpstreamError) return error.retryable;
  if (isStepwireError(error))
    return ![
      'validation_failed',
      'non_retryable',
      'write_rejected',
      'reference_error',
      'not_found',
      'conflict',
    ].includes(error.code);
  return true;
}

/** Delay before the next attempt: full jitter, at least Retry-After when given, never over the cap. @internal */
export function backoff(policy: { baseMs: number; capMs: number }, attempt: number, error: unknown): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
  const jittered = Math.random() * ceiling;
  const retryAfter = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof retryAfter === 'number' ? Math.min(policy.capMs, Math.max(jittered, retryAfter)) : jittered;
}

/** Waits `ms`; resolves false early when the signal aborts. @internal */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
