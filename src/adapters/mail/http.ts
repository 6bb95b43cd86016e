/**
 * E-mail through an HTTP provider's JSON "send" endpoint, on `fetch` only, so it runs on edge.
 * @module
 */
import { readLimited } from '../../bytes/read-limited.js';
import { isStepwireError, UpstreamError } from '../../errors/index.js';
import { encodeBase64 } from '../../pdf/base64.js';
import { cancelled } from '../../retry/index.js';
import { httpUrlOption } from '../http-url.js';
import { RecentResults } from '../recent-results.js';
import type { CallOptions } from '../types.js';
import { MailOutcomeUnknownError } from './errors.js';
import { addressIssue, checkMailMessage } from './message.js';
import type { MailAdapter, MailMessage, SentMail } from './types.js';

/** Options of {@link HttpMail}. */
export interface HttpMailOptions {
  /**
   * The provider's send endpoint; the body is Resend's `POST /emails` shape, which other providers and
   * relays accept too.
   * @default 'https://api.resend.com/emails'
   */
  url?: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Sender used when a message has none, e.g. `Billing <billing@example.com>`. */
  from: string;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The `fetch` to use. */
  fetch?: typeof fetch;
  /** Longest wait for the answer, in ms. @default 30000 */
  timeoutMs?: number;
  /** Idempotency keys remembered in this process, with the id each got. @default 1000 */
  recentKeys?: number;
}

/** Failures of `fetch` that happen before any byte of the request left: the message was not handed over. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH']);
const MAX_ANSWER_BYTES = 64 * 1024;

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Sends e-mail by POSTing JSON to a provider: `{ from, to, cc, bcc, reply_to, subject, text, html,
 * attachments: [{ filename, content (base64), content_type }], headers }` with
 * `Idempotency-Key: <step key>` (and the `X-Idempotency-Key` mail header), as Resend's API takes it;
 * the answer's `id` is the message id. One try per send: an answer 429/408/5xx is a retryable
 * `UpstreamError`, another 4xx a final one; a connection refused before sending is retryable; a
 * time-out or a connection lost after the request went out rejects with
 * {@link MailOutcomeUnknownError} (the provider dedupes by the key, but nothing is resent blindly).
 * @example
 * ```ts
 * const mail = new HttpMail({ apiKey: env.RESEND_KEY, from: 'Billing <billing@example.com>' });
 * new Engine({ mail });
 * ```
 */
export class HttpMail implements MailAdapter {
  readonly #url: string;
  readonly #from: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch | undefined;
  readonly #timeoutMs: number;
  readonly #recent: RecentResults<SentMail>;

  constructor(options: HttpMailOptions) {
    this.#url = httpUrlOption('HttpMail: url', options?.url ?? 'https://api.resend.com/emails');
    const fromIssue = addressIssue(options?.from, 'from');
    if (fromIssue) throw new TypeError(`HttpMail: ${fromIssue.message}`);
    this.#from = options.from;
    this.#headers = {
      'content-type': 'application/json; charset=utf-8',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      ...options.headers,
    };
    this.#fetch = options.fetch;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#recent = new RecentResults(options.recentKeys);
  }

  /** Sends the message (see the class); a key this process already sent resolves as before, sending nothing. */
  send(message: MailMessage, options: CallOptions = {}): Promise<SentMail> {
    checkMailMessage(message);
    return this.#recent.run(options.idempotencyKey, () => this.#post(message, options));
  }

  async #post(message: MailMessage, options: CallOptions): Promise<SentMail> {
    if (options.signal?.aborted) throw cancelled(options.signal);
    const key = options.idempotencyKey;
    const body = {
      from: message.from ?? this.#from,
      to: message.to,
      ...(message.cc.length > 0 ? { cc: message.cc } : {}),
      ...(message.bcc.length > 0 ? { bcc: message.bcc } : {}),
      ...(message.reply_to !== undefined ? { reply_to: message.reply_to } : {}),
      subject: message.subject,
      ...(message.text !== undefined ? { text: message.text } : {}),
      ...(message.html !== undefined ? { html: message.html } : {}),
      ...(message.attachments.length > 0
        ? {
            attachments: message.attachments.map((attachment) => ({
              filename: attachment.file_name,
              content: encodeBase64(attachment.data),
              content_type: attachment.content_type,
            })),
          }
        : {}),
      ...(key !== undefined ? { headers: { 'X-Idempotency-Key': key } } : {}),
    };
    const what = `E-mail "${message.subject}" through ${new URL(this.#url).host}`;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response: Response;
    let bytes: Uint8Array | undefined;
    try {
      response = await (this.#fetch ?? fetch)(this.#url, {
        method: 'POST',
        headers: key === undefined ? this.#headers : { ...this.#headers, 'idempotency-key': key },
        body: JSON.stringify(body),
        signal,
      });
      bytes = response.body ? await readLimited(response.body, MAX_ANSWER_BYTES, signal) : new Uint8Array(0);
    } catch (error) {
      if (isStepwireError(error)) throw error;
      if (options.signal?.aborted) throw cancelled(options.signal);
      const code = causeCode(error);
      if (code !== undefined && NOT_SENT.has(code))
        throw new UpstreamError(`${what} failed: ${code}; nothing was sent`, undefined, { cause: error });
      throw new MailOutcomeUnknownError(
        `${what}: the request was sent and ${timeout.aborted ? `no answer came within ${this.#timeoutMs} ms` : `the connection failed (${code ?? (error as Error).message})`}; the message may have been sent or not. It is not sent again: check the provider's log`,
        { cause: error },
      );
    }
    const text = bytes ? new TextDecoder().decode(bytes) : '';
    if (response.status < 200 || response.status >= 300) {
      const snippet = text.trim().slice(0, 200);
      throw new UpstreamError(
        `${what} failed: HTTP ${response.status}${snippet ? ` — ${snippet}` : ''}`,
        response.status,
      );
    }
    let id: unknown;
    try {
      id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    } catch {
      id = undefined;
    }
    if (typeof id !== 'string' && typeof id !== 'number')
      throw new MailOutcomeUnknownError(
        `${what}: the provider answered HTTP ${response.status} without an id; the message may have been sent`,
      );
    return { messageId: String(id) };
  }
}
