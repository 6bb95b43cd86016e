/**
 * E-mail over SMTP, on nodemailer.
 * @module
 */
import { createHash } from 'node:crypto';
import nodemailer from 'nodemailer';
import { UpstreamError } from '../errors/index.js';
import { MailOutcomeUnknownError } from '../adapters/mail/errors.js';
import { addressIssue, checkMailMessage } from '../adapters/mail/message.js';
import type { MailAdapter, MailMessage, SentMail } from '../adapters/mail/types.js';
import { RecentResults } from '../adapters/recent-results.js';
import type { CallOptions } from '../adapters/types.js';
import { cancelled } from '../retry/index.js';

/** Options of {@link SmtpMail}. */
export interface SmtpMailOptions {
  /** SMTP server host name or address. */
  host: string;
  /** SMTP port, e.g. 587 (STARTTLS), 465 (TLS) or 25. */
  port: number;
  /** TLS from the first byte (port 465). Otherwise STARTTLS is used when the server offers it. @default false */
  secure?: boolean;
  /** Credentials, when the server asks for them. */
  auth?: { user: string; pass: string };
  /** Sender used when a message has none, e.g. `Billing <billing@example.com>`. */
  from: string;
  /** Longest wait for the connection, the greeting and each answer, in ms. @default 30000 */
  timeoutMs?: number;
  /** Idempotency keys remembered in this process, with the id each got. @default 1000 */
  recentKeys?: number;
  /** TLS options passed to Node (e.g. `{ rejectUnauthorized: false }` for a test server). */
  tls?: Record<string, unknown>;
}

/** The domain of an address, for `Message-ID`s. */
function domainOf(address: string): string {
  const match = /@([^>\s]+)>?\s*$/.exec(address);
  return match ? match[1]!.toLowerCase() : 'stepwire.invalid';
}

interface SmtpFailure {
  code?: string;
  command?: string;
  responseCode?: number;
  message: string;
}

/**
 * Sends e-mail through an SMTP server with nodemailer. With the step's idempotency key the message
 * gets `Message-ID: <sha256(key)@sender domain>` (the same on every retry, so mailbox providers
 * that dedupe by it keep one copy) and an `X-Idempotency-Key` header; this process skips a key it
 * already sent. A server that refuses (a 4xx/5xx answer) gives an `UpstreamError` (4xx retryable);
 * a connection lost after the server took the message body (its `354` answer was seen) and before
 * its final answer rejects with {@link MailOutcomeUnknownError}: the message may have been
 * delivered and is not sent again. Files and URLs are never read by nodemailer (attachments are
 * bytes only).
 * @example
 * ```ts
 * import { SmtpMail } from 'stepwire/node';
 * const mail = new SmtpMail({ host: 'smtp.example.com', port: 587, auth: { user, pass }, from: 'billing@example.com' });
 * ```
 */
export class SmtpMail implements MailAdapter {
  readonly #options: SmtpMailOptions;
  readonly #recent: RecentResults<SentMail>;

  constructor(options: SmtpMailOptions) {
    if (typeof options?.host !== 'string' || options.host === '')
      throw new TypeError('SmtpMail needs options.host, the SMTP server');
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535)
      throw new TypeError(`SmtpMail: port must be a whole number 1-65535, got ${String(options.port)}`);
    const fromIssue = addressIssue(options.from, 'from');
    if (fromIssue) throw new TypeError(`SmtpMail: ${fromIssue.message}`);
    this.#options = options;
    this.#recent = new RecentResults(options.recentKeys);
  }

  /** Sends the message (see the class); a key this process already sent resolves as before, sending nothing. */
  send(message: MailMessage, options: CallOptions = {}): Promise<SentMail> {
    checkMailMessage(message);
    return this.#recent.run(options.idempotencyKey, () => this.#send(message, options));
  }

  async #send(message: MailMessage, options: CallOptions): Promise<SentMail> {
    if (options.signal?.aborted) throw cancelled(options.signal);
    const from = message.from ?? this.#options.from;
    const key = options.idempotencyKey;
    const timeout = this.#options.timeoutMs ?? 30_000;
    // Whether the server asked for the body (354): from then on a lost answer leaves the outcome unknown.
    let handedOver = false;
    const watch = (entry: unknown, text: unknown): void => {
      if ((entry as { tnx?: unknown } | null)?.tnx === 'server' && /^354\b/.test(String(text)))
        handedOver = true;
    };
    const quiet = (): void => undefined;
    const transport = nodemailer.createTransport({
      host: this.#options.host,
      port: this.#options.port,
      secure: this.#options.secure ?? false,
      ...(this.#options.auth ? { auth: this.#options.auth } : {}),
      ...(this.#options.tls ? { tls: this.#options.tls } : {}),
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      disableFileAccess: true,
      disableUrlAccess: true,
      transactionLog: true,
      logger: {
        level: quiet,
        trace: quiet,
        debug: watch,
        info: quiet,
        warn: quiet,
        error: quiet,
        fatal: quiet,
      },
    });
    const where = `${this.#options.host}:${this.#options.port}`;
    try {
      const info = await transport.sendMail({
        from,
        to: message.to,
        cc: message.cc,
        bcc: message.bcc,
        ...(message.reply_to !== undefined ? { replyTo: message.reply_to } : {}),
        subject: message.subject,
        ...(message.text !== undefined ? { text: message.text } : {}),
        ...(message.html !== undefined ? { html: message.html } : {}),
        attachments: message.attachments.map((attachment) => ({
          filename: attachment.file_name,
          content: Buffer.from(
            attachment.data.buffer,
            attachment.data.byteOffset,
            attachment.data.byteLength,
          ),
          contentType: attachment.content_type,
        })),
        ...(key !== undefined
          ? {
              messageId: `<${createHash('sha256').update(key).digest('hex').slice(0, 40)}@${domainOf(from)}>`,
              headers: { 'X-Idempotency-Key': key },
            }
          : {}),
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      return { messageId: info.messageId };
    } catch (error) {
      const failure = error as SmtpFailure;
      const answer = failure.responseCode;
      if (answer !== undefined)
        throw new UpstreamError(
          `E-mail "${message.subject}" refused by ${where} (${failure.command ?? 'SMTP'}): ${failure.message}`,
          undefined,
          { retryable: answer >= 400 && answer < 500, cause: error },
        );
      if (handedOver)
        throw new MailOutcomeUnknownError(
          `E-mail "${message.subject}": ${where} took the message and then ${failure.message.toLowerCase()}, before saying whether it accepted it; it may have been sent. It is not sent again: check the mailbox`,
          { cause: error },
        );
      throw new UpstreamError(
        `E-mail "${message.subject}" to ${where} failed before the message was sent: ${failure.message}`,
        undefined,
        { cause: error },
      );
    } finally {
      transport.close();
    }
  }
}
