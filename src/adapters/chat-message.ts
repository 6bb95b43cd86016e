/**
 * The check every chat adapter makes before it posts: a chat message names a channel and has text.
 * @module
 */
import { z } from 'zod';
import { parse } from '../schema/issues.js';
import type { ChatMessage } from './types.js';

// Stricter than the send_message input: an adapter also refuses empty text, which Slack rejects
// (`no_text`) and no chat shows.
const CHAT_MESSAGE = z.object({ channel: z.string().min(1), message: z.string().min(1) });

/**
 * Throws a `ValidationError` naming `channel` or `message` when either is missing, not a string or
 * empty; every problem is listed. @internal
 */
export function checkChatMessage(message: ChatMessage): void {
  parse(CHAT_MESSAGE, message, 'chat message');
}
