import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SlackChat } from '../../src/adapters/chat/slack.js';
import { WebhookChat } from '../../src/adapters/chat/webhook.js';
import { UpstreamError } from '../../src/errors/index.js';
import { Engine, MemoryChat, type ChatAdapter, type ChatMessage, type CallOptions } from '../../src/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack.js';

const fastRetry = { attempts: 3, baseMs: 1, capMs: 5 };
const hello = { channel: 'ops', message: 'Invoice sent' };
let slack: FakeSlack;

beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(async () => {
  await slack.close();
});
beforeEach(() => {
  slack.reset();
});

function bot(recentKeys?: number): SlackChat {
  return new SlackChat({
    token: slack.token,
    baseUrl: slack.apiUrl,
    retry: fastRetry,
    ...(recentKeys ? { recentKeys } : {}),
  });
}

describe('SlackChat with an idempotency key', () => {
  it('posts once for two sends with the same key and returns the first ts', async () => {
    const chat = bot();
    const first = await chat.send(hello, { idempotencyKey: 'run-1:notify' });
    const second = await chat.send(hello, { idempotencyKey: 'run-1:notify' });
    expect(second).toEqual(first);
    expect(slack.posted).toEqual([{ channel: 'ops', text: 'Invoice sent' }]);
  });

  it('posts once when two sends with the same key overlap', async () => {
    const chat = bot();
    const [a, b] = await Promise.all([
      chat.send(hello, { idempotencyKey: 'run-2:notify' }),
      chat.send(hello, { idempotencyKey: 'run-2:notify' }),
    ]);
    expect(a).toEqual(b);
    expect(slack.posted).toHaveLength(1);
  });

  it('posts for other keys and for every send without a key', async () => {
    const chat = bot();
    await chat.send(hello, { idempotencyKey: 'run-3:a' });
    await chat.send(hello, { idempotencyKey: 'run-3:b' });
    await chat.send(hello);
    await chat.send(hello);
    expect(slack.posted).toHaveLength(4);
  });

  it('tries again with a key whose send failed', async () => {
    const chat = bot();
    slack.fail({ status: 500 }, { status: 500 }, { status: 500 });
    await expect(chat.send(hello, { idempotencyKey: 'run-4:notify' })).rejects.toBeInstanceOf(UpstreamError);
    await chat.send(hello, { idempotencyKey: 'run-4:notify' });
    expect(slack.posted).toHaveLength(1);
  });

  it('remembers only the last recentKeys keys, and nothing across instances (at least once)', async () => {
    const chat = bot(2);
    for (const key of ['k1', 'k2', 'k3', 'k1']) await chat.send(hello, { idempotencyKey: key });
    expect(slack.posted).toHaveLength(4);
    await bot().send(hello, { idempotencyKey: 'k3' });
    expect(slack.posted).toHaveLength(5);
  });

  it('skips a repeated key through an incoming webhook too', async () => {
    const chat = new SlackChat({ webhookUrl: slack.webhookUrl, retry: fastRetry });
    await chat.send(hello, { idempotencyKey: 'run-5:notify' });
    await chat.send(hello, { idempotencyKey: 'run-5:notify' });
    expect(slack.posted).toEqual([{ channel: '#webhook', text: 'Invoice sent' }]);
  });
});

describe('WebhookChat with an idempotency key', () => {
  it('sends the key as Idempotency-Key, the same on a retry', async () => {
    slack.fail({ status: 503 });
    const chat = new WebhookChat({ url: slack.genericUrl, retry: fastRetry });
    const sent = await chat.send(hello, { idempotencyKey: 'run-6:notify' });
    expect(sent).toEqual({ id: 'm1' });
    expect(slack.requests.map((r) => r.headers['idempotency-key'])).toEqual(['run-6:notify', 'run-6:notify']);
  });

  it('posts once across two adapters when the receiver honours the key', async () => {
    const first = await new WebhookChat({ url: slack.genericUrl }).send(hello, { idempotencyKey: 'run-7:n' });
    const second = await new WebhookChat({ url: slack.genericUrl }).send(hello, {
      idempotencyKey: 'run-7:n',
    });
    expect(second).toEqual(first);
    expect(slack.posted).toHaveLength(1);
  });

  it('skips a repeated key in process without asking the receiver', async () => {
    const chat = new WebhookChat({ url: slack.genericUrl });
    await chat.send(hello, { idempotencyKey: 'run-8:n' });
    await chat.send(hello, { idempotencyKey: 'run-8:n' });
    expect(slack.requests).toHaveLength(1);
  });

  it('sends no key without one, and keeps an Idempotency-Key its headers set', async () => {
    await new WebhookChat({ url: slack.genericUrl }).send(hello);
    await new WebhookChat({ url: slack.genericUrl, headers: { 'Idempotency-Key': 'fixed' } }).send(hello, {
      idempotencyKey: 'run-9:n',
    });
    expect(slack.requests.map((r) => r.headers['idempotency-key'])).toEqual([undefined, 'fixed']);
  });
});

describe('MemoryChat with an idempotency key', () => {
  it('records one message for two sends with the same key and returns the first id', () => {
    const chat = new MemoryChat();
    const first = chat.send(hello, { idempotencyKey: 'run-10:notify' });
    const second = chat.send(hello, { idempotencyKey: 'run-10:notify' });
    chat.send(hello, { idempotencyKey: 'run-10:other' });
    expect(second).toEqual(first);
    expect(chat.messages).toHaveLength(2);
  });
});

describe('send_message steps', () => {
  it('give the chat adapter <run id>:<step name> as the key', async () => {
    const keys: (string | undefined)[] = [];
    const chat: ChatAdapter = {
      send(_message: ChatMessage, options?: CallOptions) {
        keys.push(options?.idempotencyKey);
        return { id: 'x' };
      },
    };
    const engine = new Engine({ chat });
    await engine.workflows.create({
      name: 'notify',
      steps: [
        {
          name: 'announce',
          type: 'l2',
          l2_data: { provider: 'chat', module: 'bot', action: 'send_message', input_data: hello },
        },
      ],
      wires: [],
    });
    const run = await engine.run('notify');
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(keys).toEqual([`${run.id}:announce`]);
  });
});
