/**
 * How long to wait before trying again: the policy, exponential backoff with full jitter, and the
 * statuses and errors worth another try. Edge-safe: no timers here, no `node:` imports.
 * @module
 */
import {
  CancelledError,
  LimitError,
  NonRetryableError,
  ScriptError,
  UpstreamError,
  ValidationError,
  isStepwireError,
} from '../errors/index.js';

/** How an adapter retries answers worth another try (408, 429, 5xx and network errors). */
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

/** {@link RetryOptions} with every value filled in.*/
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  capMs: number;
}

/** Attempts of a step whose `retry` does not say how many: 3, the first delay 1 s, doubling up to 30 s. */
export const STEP_RETRY_ATTEMPTS = 3;

/**
 * A step's `retry` (`attempts`, `backoff_ms`, `max_backoff_ms`) as a policy: 3 attempts, first delay
 * 1 s, longest 30 s unless the step says otherwise.
 */
export function stepRetryPolicy(retry: {
  attempts?: number | undefined;
  backoff_ms?: number | undefined;
  max_backoff_ms?: number | undefined;
}): RetryPolicy {
  return {
    attempts: retry.attempts ?? STEP_RETRY_ATTEMPTS,
    baseMs: retry.backoff_ms ?? 1000,
    capMs: retry.max_backoff_ms ?? 30_000,
  };
}

/** One attempt, no retry.*/
export const NO_RETRY: RetryPolicy = { attempts: 1, baseMs: 0, capMs: 0 };

/**
 * Fills in the defaults (5 attempts from 500 ms, 30 s cap, unless `defaults` says otherwise) and checks
 * the values; a wrong value throws a `TypeError` naming the option.
 */
export function normalizeRetry(
  options: RetryOptions | undefined,
  name = 'retry',
  defaults: RetryPolicy = { attempts: 5, baseMs: 500, capMs: 30_000 },
): RetryPolicy {
  const policy = {
    attempts: options?.attempts ?? defaults.attempts,
    baseMs: options?.baseMs ?? defaults.baseMs,
    capMs: options?.capMs ?? defaults.capMs,
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

/**
 * Wait before retry number `retry` (1 for the first): the server's `Retry-After` when given, else full
 * jitter over `baseMs * 2^(retry-1)`; both capped at `capMs`.
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

/** Statuses worth another try: 408, 429 and every 5xx. Other 4xx mean the request itself is wrong.*/
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Codes of stepwire errors that no retry can fix. */
const FINAL_CODES = new Set([
  'validation_failed',
  'non_retryable',
  'write_rejected',
  'write_conflict',
  'reference_error',
  'not_found',
  'conflict',
  'outcome_unknown',
  'invalid_output',
  'missing_secret',
  'secret_in_input',
]);

/**
 * Whether trying a failed operation again may help: never for invalid input, a broken rule, a script's
 * own error, a limit or a cancel; for an upstream answer as it says; yes for unknown errors.
 */
export function isRetryableError(error: unknown): boolean {
  if (
    error instanceof NonRetryableError ||
    error instanceof ValidationError ||
    error instanceof CancelledError ||
    error instanceof ScriptError ||
    error instanceof LimitError
  )
    return false;
  if (error instanceof UpstreamError) return error.retryable;
  if (isStepwireError(error)) return !FINAL_CODES.has(error.code) && error.code !== 'limit_exceeded';
  return true;
}

/** The `Retry-After` an error carries (as `retryAfterMs`), when it has one.*/
export function retryAfterOf(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
