import { checkChatMessage } from '../chat-message.js';
import { cancelled } from '../../retry/index.js';
import type { CallOptions, ChatAdapter, ChatMessage } from '../types.js';

/** In-memory chat that records every message; the default of `new Engine()`. */
export class MemoryChat implements ChatAdapter {
  #messages: ChatMessage[] = [];
  /** The id each idempotency key's first message got. */
  #byKey = new Map<string, string>();

  /**
   * Records the message and resolves with its number as `id`; with an `idempotencyKey` already
   * used, records nothing and returns the first message's `id`. Throws a `ValidationError` naming
   * `channel` or `message` when either is empty, and a `CancelledError` when `signal` has aborted.
   */
  send(message: ChatMessage, options: CallOptions = {}): { id: string } {
    checkChatMessage(message);
    if (options.signal?.aborted) throw cancelled(options.signal);
    const key = options.idempotencyKey;
    const earlier = key === undefined ? undefined : this.#byKey.get(key);
    if (earlier !== undefined) return { id: earlier };
    this.#messages.push({ channel: message.channel, message: message.message });
    const id = String(this.#messages.length);
    if (key !== undefined) this.#byKey.set(key, id);
    return { id };
  }

  /** Every message sent, in order, as `{ channel, message }`. */
  get messages(): ChatMessage[] {
    return this.#messages.map((m) => ({ ...m }));
  }
}
