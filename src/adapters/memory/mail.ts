import { checkMailMessage } from '../mail/message.js';
import type { MailAdapter, MailMessage, SentMail } from '../mail/types.js';
import { cancelled } from '../../retry/index.js';
import type { CallOptions } from '../types.js';

/** A message {@link MemoryMail} kept: the message, its id and the idempotency key it came with. */
export interface MemoryMailMessage extends MailMessage {
  /** The id `send` resolved with. */
  messageId: string;
  /** The step's idempotency key, when one was given. */
  idempotencyKey?: string;
}

function copy(message: MailMessage): MailMessage {
  return {
    ...message,
    to: [...message.to],
    cc: [...message.cc],
    bcc: [...message.bcc],
    attachments: message.attachments.map((attachment) => ({ ...attachment, data: attachment.data.slice() })),
  };
}

/** In-memory mail that keeps every message it is given; the default `mail` of `new Engine()`. */
export class MemoryMail implements MailAdapter {
  #messages: MemoryMailMessage[] = [];
  /** The id each idempotency key's first message got. */
  #byKey = new Map<string, string>();

  /**
   * Keeps the message and resolves with `<n@memory.stepwire>` as its id; with an `idempotencyKey`
   * already used, keeps nothing and returns the first message's id. Throws a `ValidationError`
   * naming the field of a bad address or header, and a `CancelledError` when `signal` has aborted.
   */
  send(message: MailMessage, options: CallOptions = {}): SentMail {
    checkMailMessage(message);
    if (options.signal?.aborted) throw cancelled(options.signal);
    const key = options.idempotencyKey;
    const earlier = key === undefined ? undefined : this.#byKey.get(key);
    if (earlier !== undefined) return { messageId: earlier };
    const messageId = `<${this.#messages.length + 1}@memory.stepwire>`;
    const kept: MemoryMailMessage = { ...copy(message), messageId };
    if (key !== undefined) {
      kept.idempotencyKey = key;
      this.#byKey.set(key, messageId);
    }
    this.#messages.push(kept);
    return { messageId };
  }

  /** Every message sent, in order (copies). */
  get messages(): MemoryMailMessage[] {
    return this.#messages.map((message) => ({ ...message, ...copy(message) }));
  }
}
