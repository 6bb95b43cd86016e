/**
 * Chat adapters on `fetch` (edge-safe): Slack and a generic webhook.
 * @module
 */
export { SlackChat, type SlackChatOptions } from './slack.js';
export { WebhookChat, type WebhookChatOptions } from './webhook.js';
export type { RetryOptions } from '../../retry/index.js';
