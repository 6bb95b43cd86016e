import { SendMessageInputSchema, type SendMessageOutput } from '../schema/index.js';
import type { ActionDefinition } from './registry.js';

/** `chat/bot/send_message`: posts `message` to `channel` through the chat adapter. */
export const sendMessageAction: ActionDefinition<typeof SendMessageInputSchema> = {
  provider: 'chat',
  module: 'bot',
  action: 'send_message',
  description: 'Posts a message to a chat channel.',
  input: SendMessageInputSchema,
  run: async (input, context): Promise<SendMessageOutput> => {
    const sent = await context.chat.send(
      { channel: input.channel, message: input.message },
      { signal: context.signal, idempotencyKey: context.idempotencyKey },
    );
    const output: SendMessageOutput = { ok: true, channel: input.channel };
    if (sent?.id !== undefined) output.id = sent.id;
    return output;
  },
};
