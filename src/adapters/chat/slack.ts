/**
 * Slack chat adapter: the Web API `chat.postMessage` with a bot token, or an incoming webhook.
 * Edge-safe (ky on `fetch`).
 * @module
 */
import type { CallOptions, ChatAdapter, ChatMessage } from '../types.js';
import { checkChatMessage } from '../chat-message.js';
import { postJson, snippet, upstreamError, type PostAnswer } from './post-json.js';
import { normalizeRetry, type RetryOptions, type RetryPolicy } from '../../retry/index.js';
import { RecentResults } from '../recent-results.js';
import { httpUrlOption } from '../http-url.js';

/** Options of {@link SlackChat}: give `token` or `webhookUrl`, not both. */
export interface SlackChatOptions {
  /** Bot token (`xoxb-…`) with the `chat:write` scope; messages go through `chat.postMessage`. */
  token?: string;
  /** Incoming webhook URL; every message goes to the webhook's own channel, whatever `channel` says. */
  webhookUrl?: string;
  /**
   * Base of the Web API methods, ending in `/`.
   * @default "https://slack.com/api/"
   */
  baseUrl?: string;
  /** The `fetch` to use, e.g. a proxying or test one. */
  fetch?: typeof fetch;
  /** Retries of 429 (`ratelimited`, honouring `Retry-After`), 5xx and network failures. */
  retry?: RetryOptions;
  /**
   * Longest wait for one answer, in ms; `false` waits forever.
   * @default 10000
   */
  timeoutMs?: number | false;
  /**
   * Idempotency keys remembered, with the message id each got, so a send repeated with a key
   * already used (a step delivered again) posts nothing. Kept in this process only.
   * @default 1000
   */
  recentKeys?: number;
}

/**
 * Posts messages to Slack. Slack's APIs take no idempotency key, so a send with a key already used
 * is skipped only within this process (the last `recentKeys` keys); across processes and restarts a
 * message is delivered at least once.
 * @example
 * ```ts
 * const chat = new SlackChat({ token: env.SLACK_BOT_TOKEN });
 * const engine = new Engine({ chat });
 * ```
 */
export class SlackChat implements ChatAdapter {
  readonly #token: string | undefined;
  readonly #webhookUrl: string | undefined;
  readonly #baseUrl: string;
  readonly #fetch: typeof fetch | undefined;
  readonly #policy: RetryPolicy;
  readonly #timeoutMs: number | false;
  readonly #recent: RecentResults<{ id?: string }>;

  constructor(options: SlackChatOptions) {
    if ((options.token === undefined) === (options.webhookUrl === undefined)) {
      throw new TypeError(
        'SlackChat needs exactly one of options.token (a bot token) and options.webhookUrl (an incoming webhook)',
      );
    }
    if (options.token !== undefined && !options.token)
      throw new TypeError('SlackChat options.token must not be empty');
    this.#token = options.token;
    this.#webhookUrl =
      options.webhookUrl === undefined
        ? undefined
        : httpUrlOption('SlackChat: webhookUrl', options.webhookUrl);
    const base = httpUrlOption('SlackChat: baseUrl', options.baseUrl ?? 'https://slack.com/api/', {
      plain: true,
    });
    this.#baseUrl = base.endsWith('/') ? base : `${base}/`;
    this.#fetch = options.fetch;
    this.#policy = normalizeRetry(options.retry);
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#recent = new RecentResults(options.recentKeys);
  }

  /**
   * Posts the message; resolves with Slack's message `ts` as `id` (none for a webhook). With an
   * `idempotencyKey` this process already sent, posts nothing and resolves as the first send did.
   * Rejects with a `ValidationError` naming `channel` or `message` when either is empty, and with a
   * `CancelledError` when `signal` aborts.
   */
  send(message: ChatMessage, options: CallOptions = {}): Promise<{ id?: string }> {
    checkChatMessage(message);
    return this.#recent.run(options.idempotencyKey, () => this.#post(message, options));
  }

  async #post(message: ChatMessage, options: CallOptions): Promise<{ id?: string }> {
    const common = {
      fetch: this.#fetch,
      policy: this.#policy,
      timeoutMs: this.#timeoutMs,
      signal: options.signal,
    };
    if (this.#webhookUrl !== undefined) {
      const what = `Slack webhook post (channel "${message.channel}")`;
      await postJson({
        ...common,
        url: this.#webhookUrl,
        body: { text: message.message },
        headers: { 'content-type': 'application/json; charset=utf-8' },
        what,
        interpret: (answer) => readWebhookAnswer(answer, what),
      });
      return {};
    }
    const what = `Slack chat.postMessage to channel "${message.channel}"`;
    const ts = await postJson({
      ...common,
      url: `${this.#baseUrl}chat.postMessage`,
      body: { channel: message.channel, text: message.message },
      headers: {
        authorization: `Bearer ${this.#token ?? ''}`,
        'content-type': 'application/json; charset=utf-8',
      },
      what,
      interpret: (answer) => readPostMessageAnswer(answer, what),
    });
    return ts === undefined ? {} : { id: ts };
  }
}

function readPostMessageAnswer(answer: PostAnswer, what: string): string | undefined {
  if (answer.status < 200 || answer.status >= 300) {
    throw upstreamError(`${what} failed: HTTP ${answer.status}${snippet(answer.text)}`, answer.status, false);
  }
  let body: { ok?: unknown; error?: unknown; ts?: unknown };
  try {
    body = JSON.parse(answer.text) as typeof body;
  } catch {
    throw upstreamError(
      `${what} failed: the answer is not JSON${snippet(answer.text)}`,
      answer.status,
      false,
    );
  }
  if (body?.ok === true) return typeof body.ts === 'string' ? body.ts : undefined;
  const code = typeof body?.error === 'string' ? body.error : 'unknown_error';
  // Slack answers HTTP 200 with ok:false; only its rate limit is worth another try.
  throw upstreamError(`${what} failed: Slack error "${code}"`, answer.status, code === 'ratelimited');
}

function readWebhookAnswer(answer: PostAnswer, what: string): void {
  if (answer.status >= 200 && answer.status < 300) return;
  const code = answer.text.trim() || `HTTP ${answer.status}`;
  throw upstreamError(
    `${what} failed: HTTP ${answer.status}, Slack error "${code.slice(0, 200)}"`,
    answer.status,
    false,
  );
}
