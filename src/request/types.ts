/**
 * Types of the `request` workflow step: what a step asks for, what it gets back, and the options the
 * engine passes in.
 * @module
 */

/** The `request_data` of a `request` step, after its references are resolved. */
export interface RequestData {
  /** Absolute `http:` or `https:` URL; `{name}` and `/:name` placeholders in its path are filled from `path_params`. */
  url: string;
  /** HTTP method, case-insensitive: GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS. @default "GET" */
  method?: string;
  /** Request headers. Numbers and booleans are sent as text. */
  headers?: Record<string, string>;
  /** Values for the path placeholders, each encoded with `encodeURIComponent`. */
  path_params?: Record<string, unknown>;
  /** Query parameters appended to the URL; an array repeats the key; `null` and `undefined` are left out. */
  query_params?: Record<string, unknown>;
  /**
   * Request body. A string is sent as is (`text/plain; charset=utf-8` unless a `content-type` header is
   * given); anything else is sent as JSON (`application/json` unless given). `undefined` sends no body.
   */
  body?: unknown;
}

/**
 * What a `request` step outputs. Every HTTP status is an output, not an error: a 404 or a 500 gives
 * `{ status: 404, ... }` and the workflow can branch on `status` with a condition. Only failing to get
 * an answer at all (refused address, network error, timeout, size cap, cancel) fails the step.
 */
export interface RequestOutput {
  /** HTTP status of the final response (after redirects and retries). */
  status: number;
  /** Response headers, names in lower case; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /**
   * Parsed JSON when the content type is JSON (`application/json`, `*+json`), `null` for an empty JSON
   * body; otherwise the body decoded as text (`""` when empty).
   */
  body: unknown;
}

/** Resolves a host name to all of its IP addresses, e.g. `dns.promises.lookup(host, { all: true })` on Node. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** Retries of one request. Only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE) are ever retried. */
export interface RequestRetryOptions {
  /** Tries in all, the first included; `1` means no retry. */
  attempts: number;
  /** Delay before the first retry, in ms; it doubles each retry, with full jitter. */
  baseMs: number;
  /** Longest delay between two tries, in ms; also caps a `Retry-After` the server asks for. */
  capMs: number;
}

/** Timeouts of one request step. */
export interface RequestTimeouts {
  /** Time each hop (each request sent, redirects and retries included) may wait for response headers, in ms. @default 10000 */
  headersMs: number;
  /** Time the whole step may take, all hops, retries and the body included, in ms. @default 30000 */
  totalMs: number;
}

/** Options of {@link performRequest}; the engine fills them from its `fetch`, `limits` and `security`. */
export interface RequestOptions {
  /** The fetch function that sends each hop. */
  fetch: typeof fetch;
  /**
   * Resolves host names so a name that points at a private address is refused. Without it (edge
   * runtimes), names are checked by their spelling only and DNS rebinding is not guarded against.
   */
  resolve?: Resolver;
  /**
   * Hosts that may be reached even though they are loopback, private or link-local: a host name or IP,
   * optionally with a port (`"api.internal"`, `"127.0.0.1:8080"`, `"[::1]:9000"`). Each entry is exact;
   * an entry without a port matches every port.
   */
  allowHosts: readonly string[];
  /** Cancels the request; the step then fails with a `CancelledError`. */
  signal?: AbortSignal;
  /** Timeouts; see {@link RequestTimeouts}. */
  timeouts: RequestTimeouts;
  /** Largest decoded response body, in bytes. @default 5242880 (5 MiB) */
  maxResponseBytes: number;
  /** Redirects followed; each one is checked against the address policy before it is sent. @default 5 */
  maxRedirects: number;
  /** Retries of idempotent requests on network errors, 408, 429 and 5xx. Without it: no retry. */
  retry?: RequestRetryOptions;
  /**
   * Called before each retry with the number of the try to come (2 for the first retry), the wait
   * before it in ms, and why the try before failed (`HTTP 503`, or the network error's message).
   */
  onRetry?: (attempt: number, delayMs: number, reason: string) => void;
}

/** Default limits of a request step: its timeouts, largest response body and redirects followed. */
export const DEFAULT_REQUEST_LIMITS: {
  readonly timeouts: Readonly<RequestTimeouts>;
  readonly maxResponseBytes: number;
  readonly maxRedirects: number;
  readonly retry: Readonly<RequestRetryOptions>;
} = {
  timeouts: { headersMs: 10_000, totalMs: 30_000 },
  maxResponseBytes: 5 * 1024 * 1024,
  maxRedirects: 5,
  retry: { attempts: 3, baseMs: 1_000, capMs: 30_000 },
};
