import { SendMessageInputSchema, type SendMessageOutput } from '../schema/index.js';
import { renderTexts } from '../pdf/text-template.js';
import type { PdfVariable } from '../pdf/types.js';
import type { ActionDefinition } from './registry.js';

/**
 * `chat/bot/send_message`: posts `message` to `channel` through the chat adapter; with
 * `template: true`, `message` is a mustache template (`[[ ]]` tags) over `variables`.
 */
export const sendMessageAction: ActionDefinition<typeof SendMessageInputSchema> = {
  provider: 'chat',
  module: 'bot',
  action: 'send_message',
  description: 'Posts a message to a chat channel.',
  input: SendMessageInputSchema,
  run: async (input, context): Promise<SendMessageOutput> => {
    const message = input.template
      ? (renderTexts({ message: input.message }, input.variables as PdfVariable[] | undefined).message ??
        input.message)
      : input.message;
    const sent = await context.chat.send(
      { channel: input.channel, message },
      { signal: context.signal, idempotencyKey: context.idempotencyKey },
    );
    const output: SendMessageOutput = { ok: true, channel: input.channel };
    if (sent?.id !== undefined) output.id = sent.id;
    return output;
  },
};
