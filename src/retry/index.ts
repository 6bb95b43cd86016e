/**
 * The one retry mechanism of stepwire: step retries, request steps, the chat and Google adapters all
 * take their policy, backoff, `Retry-After` reading, retryable statuses and abortable waits from here.
 * The HTTP client (`createClient`) is the one exception: ky sends its requests, so ky's own retry runs
 * there, fed with this module's statuses and backoff.
 * @module
 */
export {
  NO_RETRY,
  STEP_RETRY_ATTEMPTS,
  backoffDelay,
  isRetryableError,
  isRetryableStatus,
  normalizeRetry,
  retryAfterOf,
  stepRetryPolicy,
  type RetryOptions,
  type RetryPolicy,
} from './policy.js';
export { parseRetryAfter } from './retry-after.js';
export {
  MAX_TIMER_MS,
  cancelled,
  sleep,
  withRetry,
  type RetryVerdict,
  type WithRetryOptions,
} from './wait.js';
