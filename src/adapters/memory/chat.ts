import type { ChatAdapter, ChatMessage } from '../types.js';

/** In-memory chat that records every message; the default of `new Engine()`. */
export class MemoryChat implements ChatAdapter {
  #messages: ChatMessage[] = [];

  /** Records the message. */
  send(message: ChatMessage): { id: string } {
    this.#messages.push({ channel: message.channel, message: message.message });
    return { id: String(this.#messages.length) };
  }

  /** Every message sent, in order, as `{ channel, message }`. */
  get messages(): ChatMessage[] {
    return this.#messages.map((m) => ({ ...m }));
  }
}
