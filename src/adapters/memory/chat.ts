import { checkChatMessage } from '../chat-message.js';
import { cancelled } from '../../retry/index.js';
import type { CallOptions, ChatAdapter, ChatMessage } from '../types.js';

/** In-memory chat that records every message; the default of `new Engine()`. */
export class MemoryChat implements ChatAdapter {
  #messages: ChatMessage[] = [];

  /**
   * Records the message and resolves with its number as `id`. Throws a `ValidationError` naming
   * `channel` or `message` when either is empty, and a `CancelledError` when `signal` has aborted.
   */
  send(message: ChatMessage, options: CallOptions = {}): { id: string } {
    checkChatMessage(message);
    if (options.signal?.aborted) throw cancelled(options.signal);
    this.#messages.push({ channel: message.channel, message: message.message });
    return { id: String(this.#messages.length) };
  }

  /** Every message sent, in order, as `{ channel, message }`. */
  get messages(): ChatMessage[] {
    return this.#messages.map((m) => ({ ...m }));
  }
}
