/**
 * One JSON POST with the shared retry rules, on ky. Used by the chat adapters.
 * @module
 */
import ky from 'ky';
import { readLimited } from '../../bytes/read-limited.js';
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

/** The largest answer read: chat APIs answer a few hundred bytes; a larger one is not theirs. @internal */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * POSTs `body` as JSON, retrying 429, 5xx, timeouts and network failures within `policy`. The
 * timeout covers the whole answer, its body included, and the body is read up to
 * {@link MAX_ANSWER_BYTES}. @internal
 */
export function postJson<T>(options: PostJsonOptions<T>): Promise<T> {
  const client = ky.create({
    retry: 0,
    throwHttpErrors: false,
    timeout: false,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return withRetry(
    async function postAttempt() {
      const deadline = options.timeoutMs === false ? undefined : AbortSignal.timeout(options.timeoutMs);
      const signals = [options.signal, deadline].filter((signal) => signal !== undefined);
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
      let response: Response;
      let bytes: Uint8Array | undefined;
      try {
        response = await client.post(options.url, {
          json: options.body,
          ...(options.headers ? { headers: options.headers } : {}),
          ...(signal ? { signal } : {}),
        });
        bytes = response.body
          ? await readLimited(response.body, MAX_ANSWER_BYTES, signal)
          : new Uint8Array(0);
      } catch (error) {
        if (isStepwireError(error) || options.signal?.aborted) throw error;
        const reason = deadline?.aborted
          ? `no answer within ${String(options.timeoutMs)} ms`
          : describe(error);
        throw new UpstreamError(`${options.what} failed: ${reason}`, undefined, { cause: error });
      }
      if (bytes === undefined)
        throw new UpstreamError(
          `${options.what} failed: the answer (HTTP ${response.status}) is larger than ${MAX_ANSWER_BYTES} bytes`,
          response.status,
          { retryable: false },
        );
      const text = new TextDecoder().decode(bytes);
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
