/**
 * Runs one `request` step: address policy per hop, redirects followed by hand, retries, timeouts and a
 * bounded body read. Edge-safe: only `fetch`, `AbortSignal`, streams and timers.
 * @module
 */
import ky from 'ky';
import {
  CancelledError,
  LimitError,
  RequestRefusedError,
  StepwireError,
  UpstreamError,
} from '../errors/index.js';
import { checkDestinationCompiled, compileAllowHosts, type AllowEntry } from './policy.js';
import { IDEMPOTENT_METHODS, prepareRequest, type PreparedRequest } from './prepare.js';
import { untilAborted } from '../bytes/read-limited.js';
import { decodeBody, headersToRecord, readBodyBytes } from './response.js';
import { MAX_TIMER_MS, backoffDelay, isRetryableStatus, parseRetryAfter, sleep } from '../retry/index.js';
import type { RequestData, RequestOptions, RequestOutput } from './types.js';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials: never sent on to another origin after a redirect. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];

/** State shared by every hop and attempt of one step. */
interface Run {
  options: RequestOptions;
  allow: readonly AllowEntry[];
  /** Aborts when the caller cancels or the total timeout passes. */
  signal: AbortSignal;
  deadline: number;
}

/** Names a request in messages without its query string, which may hold secrets. */
function describe(method: string, url: URL): string {
  return `${method} ${url.origin}${url.pathname}`;
}

function checkOptions(options: RequestOptions): void {
  if (typeof options?.fetch !== 'function') throw new TypeError('request options: fetch must be a function');
  const positive: [string, number][] = [
    ['timeouts.headersMs', options.timeouts?.headersMs],
    ['timeouts.totalMs', options.timeouts?.totalMs],
  ];
  const nonNegative: [string, number][] = [
    ['maxResponseBytes', options.maxResponseBytes],
    ['maxRedirects', options.maxRedirects],
  ];
  for (const [name, value] of positive) {
    if (typeof value !== 'number' || !(value > 0))
      throw new TypeError(`request options: ${name} must be a positive number, got ${String(value)}`);
  }
  for (const [name, value] of nonNegative) {
    if (typeof value !== 'number' || !(value >= 0))
      throw new TypeError(`request options: ${name} must be a number >= 0, got ${String(value)}`);
  }
}

/** Turns anything a hop or body read threw into a stepwire error; network failures become retryable `UpstreamError`s. */
function asUpstream(error: unknown, what: string): StepwireError {
  if (error instanceof StepwireError) return error;
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamError(`${what} failed: ${message}${cause}`, undefined, { cause: error });
}

/** Sends one hop through ky and waits for its headers, no longer than `timeouts.headersMs`. */
async function sendHop(
  run: Run,
  url: URL,
  method: string,
  headers: Headers,
  body: string | undefined,
): Promise<Response> {
  const hop = new AbortController();
  let headersTimedOut = false;
  const ms = run.options.timeouts.headersMs;
  const timer = setTimeout(
    () => {
      headersTimedOut = true;
      hop.abort(new Error('headers timeout'));
    },
    Math.min(ms, MAX_TIMER_MS),
  );
  try {
    return await ky(url.href, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      fetch: run.options.fetch,
      signal: AbortSignal.any([run.signal, hop.signal]),
      // Redirects are followed by hand so every hop passes the address policy first.
      redirect: 'manual',
      // Every status is an output; retries and timeouts are ours (one deadline for all hops and retries).
      throwHttpErrors: false,
      retry: 0,
      timeout: false,
    });
  } catch (error) {
    if (run.signal.aborted) throw error;
    if (headersTimedOut) {
      throw new LimitError(
        'request.timeout.headers',
        `${describe(method, url)} sent no response headers within request.timeout.headers (${ms} ms)`,
        { cause: error },
      );
    }
    throw asUpstream(error, describe(method, url));
  } finally {
    clearTimeout(timer);
  }
}

/** Sends the request and follows redirects, checking each destination before connecting to it. */
async function followRedirects(
  run: Run,
  request: PreparedRequest,
): Promise<{ response: Response; url: URL; method: string }> {
  let { url, method, body } = request as { url: URL; method: string; body: string | undefined };
  const headers = new Headers(request.headers);
  for (let hop = 0; ; hop++) {
    // A slow resolver must not outlive the total timeout or a cancel.
    await untilAborted(checkDestinationCompiled(url, run.allow, run.options.resolve), run.signal);
    const response = await sendHop(run, url, method, headers, body);
    if (response.type === 'opaqueredirect') {
      throw new UpstreamError(
        `${describe(method, url)} was redirected, but this runtime's fetch hides redirect targets, so the redirect cannot be checked`,
        undefined,
        { retryable: false },
      );
    }
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return { response, url, method };
    await response.body?.cancel().catch(() => undefined);
    if (hop >= run.options.maxRedirects) {
      throw new LimitError(
        'request.maxRedirects',
        `${describe(request.method, request.url)} was redirected more than request.maxRedirects (${run.options.maxRedirects}) times`,
      );
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch (error) {
      throw new UpstreamError(
        `${describe(method, url)} redirected to an invalid location ${JSON.stringify(location)}`,
        response.status,
        { cause: error, retryable: false },
      );
    }
    // As browsers do: 303 turns into GET, and so do 301/302 after a POST; the body is dropped then.
    if (
      (response.status === 303 && method !== 'HEAD') ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      method = 'GET';
      body = undefined;
      for (const name of BODY_HEADERS) headers.delete(name);
    }
    if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
    url = next;
  }
}

async function finish(run: Run, response: Response, url: URL, method: string): Promise<RequestOutput> {
  const what = describe(method, url);
  let bytes: Uint8Array;
  try {
    bytes =
      method === 'HEAD'
        ? new Uint8Array(0)
        : await readBodyBytes(response, run.options.maxResponseBytes, run.signal, what);
  } catch (error) {
    if (run.signal.aborted) throw error;
    throw asUpstream(error, what);
  }
  return {
    status: response.status,
    headers: headersToRecord(response.headers),
    body: decodeBody(bytes, response.headers.get('content-type'), response.status, what),
  };
}

/** Whether waiting `ms` more still leaves time before the total deadline. */
function fits(run: Run, ms: number): boolean {
  return Date.now() + ms < run.deadline;
}

async function withRetries(run: Run, request: PreparedRequest): Promise<RequestOutput> {
  const retry = run.options.retry;
  const attempts =
    retry && IDEMPOTENT_METHODS.has(request.method) ? Math.max(1, Math.floor(retry.attempts)) : 1;
  for (let n = 1; ; n++) {
    let wait: number | undefined;
    let reason = '';
    try {
      const { response, url, method } = await followRedirects(run, request);
      if (retry && n < attempts && isRetryableStatus(response.status)) {
        const ms = backoffDelay(n, retry, parseRetryAfter(response.headers.get('retry-after')));
        if (fits(run, ms)) {
          await response.body?.cancel().catch(() => undefined);
          wait = ms;
          reason = `HTTP ${response.status}`;
        }
      }
      if (wait === undefined) return await finish(run, response, url, method);
    } catch (error) {
      const retryable = error instanceof UpstreamError && error.retryable && error.status === undefined;
      if (!retry || n >= attempts || !retryable || run.signal.aborted) throw error;
      const ms = backoffDelay(n, retry);
      if (!fits(run, ms)) throw error;
      wait = ms;
      reason = error.message;
    }
    run.options.onRetry?.(n + 1, wait, reason);
    await sleep(wait, run.signal);
  }
}

/**
 * Performs the HTTP request of a `request` step and returns its status, headers and body.
 *
 * - Every destination, the first and each redirect hop, must pass the address policy before a
 *   connection is made (see {@link checkDestination}); otherwise a `RequestRefusedError` says why.
 * - Every HTTP status is an output (a 404 is `{ status: 404 }`), so workflows branch on `status`.
 * - Fails with `LimitError` (`request.timeout.headers`, `request.timeout.total`,
 *   `request.maxResponseBytes`, `request.maxRedirects`), `CancelledError` when `signal` aborts,
 *   `UpstreamError` when no answer came (retryable) or the answer cannot be read, and
 *   `ValidationError` listing every problem of `request_data`.
 * - With `retry`, idempotent methods are retried on network errors, 408, 429 and 5xx, honouring
 *   `Retry-After` up to `retry.capMs`, while the total timeout leaves time; other 4xx never retry.
 *   Timeouts are not retried. After the last try its answer is the output.
 *
 * @example
 * const out = await performRequest(
 *   { url: 'https://api.example.com/items/{id}', path_params: { id: 7 }, query_params: { tag: ['a', 'b'] } },
 *   { fetch, allowHosts: [], timeouts: { headersMs: 10_000, totalMs: 30_000 }, maxResponseBytes: 5 << 20, maxRedirects: 5 },
 * );
 * if (out.status === 200) console.log(out.body);
 */
export async function performRequest(data: RequestData, options: RequestOptions): Promise<RequestOutput> {
  checkOptions(options);
  const request = prepareRequest(data);
  const allow = compileAllowHosts(options.allowHosts ?? []);
  if (options.signal?.aborted)
    throw new CancelledError(`${describe(request.method, request.url)} was cancelled before it was sent`, {
      cause: options.signal.reason,
    });
  const total = new AbortController();
  const totalMs = options.timeouts.totalMs;
  const timer = setTimeout(() => total.abort(new Error('total timeout')), Math.min(totalMs, MAX_TIMER_MS));
  const signal = options.signal ? AbortSignal.any([options.signal, total.signal]) : total.signal;
  const run: Run = { options, allow, signal, deadline: Date.now() + totalMs };
  try {
    return await withRetries(run, request);
  } catch (error) {
    const what = describe(request.method, request.url);
    if (options.signal?.aborted) throw new CancelledError(`${what} was cancelled`, { cause: error });
    if (total.signal.aborted && !(error instanceof RequestRefusedError)) {
      throw new LimitError(
        'request.timeout.total',
        `${what} did not finish within request.timeout.total (${totalMs} ms)`,
        { cause: error },
      );
    }
    throw asUpstream(error, what);
  } finally {
    clearTimeout(timer);
  }
}
