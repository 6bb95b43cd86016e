/**
 * One JSON POST with the shared retry rules, on ky. Used by the chat adapters.
 * @module
 */
import ky, { TimeoutError } from 'ky';
import { isStepwireError, UpstreamError } from '../../errors/index.js';
import { parseRetryAfter, withRetry, type RetryPolicy, type RetryVerdict } from '../../retry/index.js';

/** An answer as read: status, headers and body text. @internal */
export interface PostAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** Options of {@link postJson}. @internal */
export interface PostJsonOptions<T> {
  url: string;
  body: unknown;
  headers?: Record<string, string> | undefined;
  fetch?: typeof fetch | undefined;
  policy: RetryPolicy;
  timeoutMs: number | false;
  signal?: AbortSignal | undefined;
  /** Names the call in messages, e.g. `Slack chat.postMessage to #ops`. */
  what: string;
  /** Reads a 1xx-4xx answer other than 429: returns the result or throws. */
  interpret: (answer: PostAnswer) => T;
}

const RETRY_AFTER = new WeakMap<object, number>();

/** An `UpstreamError` that the retry loop honours a `Retry-After` of. @internal */
export function upstreamError(
  message: string,
  status: number | undefined,
  retryable: boolean,
  afterMs?: number,
): UpstreamError {
  const error = new UpstreamError(message, status, { retryable });
  if (afterMs !== undefined) RETRY_AFTER.set(error, afterMs);
  return error;
}

/** Retry verdict of a chat failure: retryable `UpstreamError`s and network failures. @internal */
export function classifyChatError(error: unknown): RetryVerdict {
  if (error instanceof UpstreamError) {
    const afterMs = RETRY_AFTER.get(error);
    return afterMs === undefined ? { retry: error.retryable } : { retry: error.retryable, afterMs };
  }
  return { retry: !isStepwireError(error) };
}

/** POSTs `body` as JSON, retrying 429, 5xx, timeouts and network failures within `policy`. @internal */
export function postJson<T>(options: PostJsonOptions<T>): Promise<T> {
  const client = ky.create({
    retry: 0,
    throwHttpErrors: false,
    timeout: options.timeoutMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return withRetry(
    async function postAttempt() {
      let response: Response;
      let text: string;
      try {
        response = await client.post(options.url, {
          json: options.body,
          ...(options.headers ? { headers: options.headers } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
        });
        text = await response.text();
      } catch (error) {
        if (isStepwireError(error) || options.signal?.aborted) throw error;
        const reason =
          error instanceof TimeoutError
            ? `no answer within ${String(options.timeoutMs)} ms`
            : describe(error);
        throw new UpstreamError(`${options.what} failed: ${reason}`, undefined, { cause: error });
      }
      const answer: PostAnswer = { status: response.status, headers: response.headers, text };
      if (answer.status === 429 || answer.status >= 500) {
        const afterMs = parseRetryAfter(answer.headers.get('retry-after'));
        throw upstreamError(
          `${options.what} failed: HTTP ${answer.status}${snippet(text)}`,
          answer.status,
          true,
          afterMs,
        );
      }
      return options.interpret(answer);
    },
    { policy: options.policy, classify: classifyChatError, signal: options.signal },
  );
}

/** ` — <first 200 characters of the body>` or nothing. @internal */
export function snippet(text: string): string {
  const trimmed = text.trim();
  return trimmed ? ` — ${trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed}` : '';
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
