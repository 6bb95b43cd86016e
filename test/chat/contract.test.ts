import { afterAll, beforeAll } from 'vitest';
import { SlackChat } from '../../src/adapters/chat/slack.js';
import { WebhookChat } from '../../src/adapters/chat/webhook.js';
import { MemoryChat } from '../../src/index.js';
import { describeChatContract } from '../../src/testing/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack.js';

const retry = { attempts: 2, baseMs: 1, capMs: 5 };
let slack: FakeSlack;

beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(async () => {
  await slack.close();
});

/** What the fake received, as chat messages; the fake is emptied by each `create`. */
function deliveredToFake() {
  slack.reset();
  return () => slack.posted.map((p) => ({ channel: p.channel, message: p.text }));
}

describeChatContract({
  name: 'MemoryChat',
  create: () => {
    const adapter = new MemoryChat();
    return { adapter, delivered: () => adapter.messages };
  },
  capabilities: { ids: true },
});

describeChatContract({
  name: 'SlackChat with a bot token, on a local fake of Slack',
  create: () => ({
    delivered: deliveredToFake(),
    adapter: new SlackChat({ token: slack.token, baseUrl: slack.apiUrl, retry }),
  }),
  channel: 'ops',
  capabilities: { ids: true },
});

describeChatContract({
  name: 'SlackChat with an incoming webhook, on a local fake of Slack',
  create: () => ({
    delivered: deliveredToFake(),
    adapter: new SlackChat({ webhookUrl: slack.webhookUrl, retry }),
  }),
  capabilities: { channels: false },
});

describeChatContract({
  name: 'WebhookChat, on a local webhook receiver',
  create: () => ({
    delivered: deliveredToFake(),
    adapter: new WebhookChat({ url: slack.genericUrl, retry }),
  }),
  capabilities: { ids: true },
});
