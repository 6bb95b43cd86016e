/**
 * Reading googleapis (gaxios) failures: status, Google's message, Retry-After, and whether the
 * request may have reached Google.
 * @module
 */
import type { RetryVerdict } from '../../retry/index.js';
import { parseRetryAfter } from '../../retry/index.js';

/** What a failed googleapis call tells. @internal */
export interface GoogleFailure {
  /** HTTP status, when an answer came. */
  status?: number;
  /** Google's `error.status`, e.g. `INVALID_ARGUMENT`, or the network error code. */
  reason?: string;
  /** Google's message, or the network error's. */
  message: string;
  /** `Retry-After` in ms. */
  afterMs?: number;
  /** True when the request surely never reached Google (connection refused, name not resolved). */
  notSent: boolean;
  /** True for rate limits reported as 403 (Drive's `userRateLimitExceeded`) or 429. */
  rateLimited: boolean;
  /**
   * True when the credentials could not be used: the auth client failed before any request (a
   * missing key file, a bad private key, no refresh token) or the OAuth token endpoint refused them
   * (`invalid_grant`). Never retried.
   */
  credentials: boolean;
}

const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ERR_INVALID_URL',
]);
const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RESOURCE_EXHAUSTED']);

interface GaxiosLike {
  message?: string;
  status?: number;
  code?: unknown;
  cause?: unknown;
  response?: { status?: number; data?: unknown; headers?: unknown };
}

/** Reads any error a googleapis call threw. @internal */
export function readGoogleError(error: unknown): GoogleFailure {
  const e = (error ?? {}) as GaxiosLike;
  const status = e.response?.status ?? (typeof e.status === 'number' ? e.status : undefined);
  const body = parseBody(e.response?.data);
  const googleError = body?.error;
  let message = e.message ?? String(error);
  let reason: string | undefined;
  const reasons: string[] = [];
  if (googleError && typeof googleError === 'object') {
    if (typeof googleError.message === 'string') message = googleError.message;
    if (typeof googleError.status === 'string') reason = googleError.status;
    for (const item of Array.isArray(googleError.errors) ? googleError.errors : []) {
      if (item && typeof item.reason === 'string') reasons.push(item.reason);
    }
  } else if (typeof googleError === 'string') {
    message =
      typeof body?.error_description === 'string' ? `${googleError}: ${body.error_description}` : googleError;
  }
  if (reason) reasons.push(reason);
  // Google APIs answer `{ error: { … } }`; only the OAuth token endpoint answers `{ error: "invalid_grant" }`.
  const tokenRefused = typeof googleError === 'string' && status !== undefined && status < 500;
  const credentials = tokenRefused || thrownByAuth(error);
  const failure: GoogleFailure = {
    message,
    notSent: credentials,
    rateLimited: status === 429 || (status === 403 && reasons.some((r) => RATE_REASONS.has(r))),
    credentials,
  };
  if (status !== undefined) failure.status = status;
  if (reason !== undefined) failure.reason = reason;
  if (status === undefined) {
    const code = findCode(error);
    if (code !== undefined) failure.reason = code;
    failure.notSent = code !== undefined && NOT_SENT_CODES.has(code);
  }
  const afterMs = parseRetryAfter(headerValue(e.response?.headers, 'retry-after'));
  if (afterMs !== undefined) failure.afterMs = afterMs;
  return failure;
}

/** Retry verdict for calls safe to repeat (reads, idempotent writes): rate limits, 408, 5xx and network failures, never credentials. @internal */
export function classifySafe(failure: GoogleFailure): RetryVerdict {
  const retry =
    !failure.credentials &&
    (failure.rateLimited ||
      failure.status === 408 ||
      (failure.status !== undefined && failure.status >= 500) ||
      failure.status === undefined);
  return failure.afterMs === undefined ? { retry } : { retry, afterMs: failure.afterMs };
}

/**
 * Whether a failed call that changes data may still have been applied: a 5xx, a 408, or a network
 * failure after the request left (a timeout, a reset connection). @internal
 */
export function outcomeUnknown(failure: GoogleFailure): boolean {
  if (failure.status === undefined) return !failure.notSent;
  return failure.status >= 500 || failure.status === 408;
}

/**
 * `HTTP 400 INVALID_ARGUMENT: message`, `no answer (ECONNRESET: message)`, or for credentials
 * `token endpoint HTTP 400: invalid_grant: …` / `credentials unusable (ENOENT: message)`. @internal
 */
export function describeFailure(failure: GoogleFailure): string {
  if (failure.credentials)
    return failure.status === undefined
      ? `credentials unusable (${failure.reason && !failure.message.startsWith(failure.reason) ? `${failure.reason}: ` : ''}${failure.message})`
      : `token endpoint HTTP ${failure.status}: ${failure.message}`;
  if (failure.status === undefined)
    return `no answer (${failure.reason ?? 'network error'}: ${failure.message})`;
  return `HTTP ${failure.status}${failure.reason ? ` ${failure.reason}` : ''}: ${failure.message}`;
}

function parseBody(data: unknown): { error?: any; error_description?: unknown } | undefined {
  if (typeof data === 'string') {
    try {
      return JSON.parse(data) as { error?: unknown };
    } catch {
      return undefined;
    }
  }
  return data && typeof data === 'object' ? (data as { error?: unknown }) : undefined;
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Whether the auth client threw before any HTTP request: gaxios errors (answers, network failures,
 * timeouts) carry the request's `config`; aborts are not credential problems.
 */
function thrownByAuth(error: unknown): boolean {
  if (!(error instanceof Error) || 'config' in error || 'response' in error) return false;
  return !['AbortError', 'TimeoutError', 'CancelledError'].includes(error.name);
}

function findCode(error: unknown): string | undefined {
  let current: unknown = error;
  let code: string | undefined;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const value = (current as { code?: unknown; name?: unknown }).code;
    if (typeof value === 'string' && value !== 'ERR_GAXIOS') code ??= value;
    if (typeof value === 'string' && NOT_SENT_CODES.has(value)) return value;
    current = (current as { cause?: unknown }).cause;
  }
  return code;
}
