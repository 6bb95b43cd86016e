import type { CallOptions, MaybePromise } from '../types.js';

/** A file sent with an e-mail. */
export interface MailAttachment {
  /** File name shown to the reader, e.g. `invoice-42.pdf`. */
  file_name: string;
  /** MIME type, e.g. `application/pdf`. */
  content_type: string;
  /** The bytes. */
  data: Uint8Array;
}

/**
 * An e-mail as `send_email` hands it to the {@link MailAdapter}: addresses checked (no CR or LF in
 * any header), attachments decoded. An address is `user@example.com` or `Name <user@example.com>`.
 */
export interface MailMessage {
  /** Sender; adapters fill in their own `from` when it is not set. */
  from?: string;
  /** Recipients (at least one of `to`, `cc`, `bcc`). */
  to: string[];
  /** Copy recipients. */
  cc: string[];
  /** Blind copy recipients (not shown in the headers). */
  bcc: string[];
  /** Where replies go. */
  reply_to?: string;
  /** Subject line. */
  subject: string;
  /** Plain-text body. */
  text?: string;
  /** HTML body. */
  html?: string;
  /** Files attached. */
  attachments: MailAttachment[];
}

/** What a send resolved with. */
export interface SentMail {
  /** The id of the message: its `Message-ID` header or the provider's id. */
  messageId: string;
}

/**
 * Sends e-mail for the `send_email` action. `idempotencyKey` is the step's key: the same on every
 * retry and redelivery of the step, to be sent along (a header) and used to send once where the
 * adapter can tell. An outcome that cannot be known once the message was handed over rejects with
 * {@link MailOutcomeUnknownError}, which the engine does not retry.
 */
export interface MailAdapter {
  /** Sends the message; resolves with its id. */
  send(message: MailMessage, options: CallOptions): MaybePromise<SentMail>;
}
