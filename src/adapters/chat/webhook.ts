/**
 * A generic chat webhook: POSTs `{ channel, message }` as JSON to one URL. Edge-safe (ky on `fetch`).
 * @module
 */
import type { CallOptions, ChatAdapter, ChatMessage } from '../types.js';
import { checkChatMessage } from '../chat-message.js';
import { postJson, snippet, upstreamError, type PostAnswer } from './post-json.js';
import { normalizeRetry, type RetryOptions, type RetryPolicy } from '../../retry/index.js';
import { RecentResults } from '../recent-results.js';
import { httpUrlOption } from '../http-url.js';

/** Options of {@link WebhookChat}. */
export interface WebhookChatOptions {
  /** Where every message is POSTed. */
  url: string;
  /** Extra request headers, e.g. an `authorization` the receiver checks. */
  headers?: Record<string, string>;
  /** The `fetch` to use, e.g. a proxying or test one. */
  fetch?: typeof fetch;
  /** Retries of 429 (honouring `Retry-After`), 5xx and network failures. */
  retry?: RetryOptions;
  /**
   * Longest wait for one answer, in ms; `false` waits forever.
   * @default 10000
   */
  timeoutMs?: number | false;
  /**
   * Idempotency keys remembered, with the message id each got, so a send repeated with a key
   * already used posts nothing. Kept in this process only.
   * @default 1000
   */
  recentKeys?: number;
}

/**
 * Posts each message as `{ "channel": …, "message": … }` JSON to a webhook. A 2xx answer is success;
 * when its body is JSON with a string or number `id`, that is the message id. A send with an
 * idempotency key carries it as the `Idempotency-Key` header (unless `headers` sets one), the same on
 * every retry, so a receiver that honours it posts the message once; this process also skips a key
 * it already sent (the last `recentKeys` keys).
 * @example
 * ```ts
 * const chat = new WebhookChat({ url: 'https://hooks.example.com/chat', headers: { authorization: 'Bearer …' } });
 * ```
 */
export class WebhookChat implements ChatAdapter {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch | undefined;
  readonly #policy: RetryPolicy;
  readonly #timeoutMs: number | false;
  readonly #recent: RecentResults<{ id?: string }>;

  constructor(options: WebhookChatOptions) {
    if (typeof options?.url !== 'string' || !options.url)
      throw new TypeError('WebhookChat needs options.url, the webhook address');
    this.#url = httpUrlOption('WebhookChat: url', options.url);
    this.#headers = { 'content-type': 'application/json; charset=utf-8', ...options.headers };
    this.#fetch = options.fetch;
    this.#policy = normalizeRetry(options.retry);
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#recent = new RecentResults(options.recentKeys);
  }

  /**
   * POSTs the message; resolves with the receiver's `id` when it sends one. With an
   * `idempotencyKey` this process already sent, posts nothing and resolves as the first send did.
   * Rejects with a `ValidationError` naming `channel` or `message` when either is empty, and with a
   * `CancelledError` when `signal` aborts.
   */
  send(message: ChatMessage, options: CallOptions = {}): Promise<{ id?: string }> {
    checkChatMessage(message);
    return this.#recent.run(options.idempotencyKey, () => this.#post(message, options));
  }

  async #post(message: ChatMessage, options: CallOptions): Promise<{ id?: string }> {
    const what = `Chat webhook post to channel "${message.channel}"`;
    const key = options.idempotencyKey;
    const ownKey = Object.keys(this.#headers).some((name) => name.toLowerCase() === 'idempotency-key');
    const id = await postJson({
      url: this.#url,
      body: { channel: message.channel, message: message.message },
      headers: key === undefined || ownKey ? this.#headers : { ...this.#headers, 'idempotency-key': key },
      fetch: this.#fetch,
      policy: this.#policy,
      timeoutMs: this.#timeoutMs,
      signal: options.signal,
      what,
      interpret: (answer) => readAnswer(answer, what),
    });
    return id === undefined ? {} : { id };
  }
}

function readAnswer(answer: PostAnswer, what: string): string | undefined {
  if (answer.status < 200 || answer.status >= 300) {
    throw upstreamError(`${what} failed: HTTP ${answer.status}${snippet(answer.text)}`, answer.status, false);
  }
  try {
    const body = JSON.parse(answer.text) as { id?: unknown } | null;
    const id = body?.id;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  } catch {
    return undefined;
  }
}
