import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SlackChat } from '../../src/adapters/chat/slack.js';
import { WebhookChat } from '../../src/adapters/chat/webhook.js';
import { CancelledError, UpstreamError } from '../../src/errors/index.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack.js';

const fastRetry = { attempts: 4, baseMs: 1, capMs: 5 };
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

function bot(options: Partial<ConstructorParameters<typeof SlackChat>[0]> = {}): SlackChat {
  return new SlackChat({ token: slack.token, baseUrl: slack.apiUrl, retry: fastRetry, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('SlackChat with a bot token', () => {
  it('posts chat.postMessage as JSON with the bearer token and returns the ts as id', async () => {
    const sent = await bot().send({ channel: 'ops', message: 'Deploy done' });
    expect(sent.id).toMatch(/^\d+\.\d+$/);
    expect(slack.requests).toHaveLength(1);
    const request = slack.requests[0]!;
    expect(request.path).toBe('/api/chat.postMessage');
    expect(request.headers.authorization).toBe(`Bearer ${slack.token}`);
    expect(request.headers['content-type']).toMatch(/^application\/json/);
    expect(request.json).toEqual({ channel: 'ops', text: 'Deploy done' });
    expect(slack.posted).toEqual([{ channel: 'ops', text: 'Deploy done' }]);
  });

  it('turns ok:false into an UpstreamError naming the channel and the Slack code, without retrying', async () => {
    const error = await rejection(bot().send({ channel: 'nowhere', message: 'hi' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toContain('"nowhere"');
    expect((error as UpstreamError).message).toContain('channel_not_found');
    expect((error as UpstreamError).retryable).toBe(false);
    expect(slack.requests).toHaveLength(1);
  });

  it('reports a bad token as invalid_auth', async () => {
    const error = await rejection(bot({ token: 'xoxb-wrong' }).send({ channel: 'ops', message: 'hi' }));
    expect((error as Error).message).toContain('invalid_auth');
  });

  it('retries HTTP 429 ratelimited, waiting the Retry-After', async () => {
    slack.fail({ status: 429, retryAfter: '0.2', body: '{"ok":false,"error":"ratelimited"}' });
    const started = performance.now();
    await bot({ retry: { attempts: 2, baseMs: 1, capMs: 1000 } }).send({
      channel: 'general',
      message: 'hello',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(slack.requests).toHaveLength(2);
    expect(slack.posted).toHaveLength(1);
  });

  it('caps a long Retry-After at capMs', async () => {
    slack.fail({ status: 429, retryAfter: '30', body: '{"ok":false,"error":"ratelimited"}' });
    const started = performance.now();
    await bot({ retry: { attempts: 2, baseMs: 1, capMs: 50 } }).send({ channel: 'general', message: 'x' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(slack.requests).toHaveLength(2);
  });

  it('retries ok:false ratelimited answered with HTTP 200', async () => {
    slack.fail({ status: 200, body: '{"ok":false,"error":"ratelimited"}' });
    await bot().send({ channel: 'general', message: 'hello' });
    expect(slack.requests).toHaveLength(2);
  });

  it('retries 5xx and gives up after the configured attempts', async () => {
    slack.fail({ status: 500 }, { status: 503 });
    await bot().send({ channel: 'general', message: 'a' });
    expect(slack.requests).toHaveLength(3);

    slack.requests.length = 0;
    slack.fail({ status: 502 }, { status: 502 }, { status: 502 }, { status: 502 });
    const error = await rejection(bot().send({ channel: 'general', message: 'b' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(502);
    expect(slack.requests).toHaveLength(4);
  });

  it('retries an answer that does not come within timeoutMs', async () => {
    slack.fail({ status: 200, delayMs: 400, body: '{"ok":true,"ts":"late"}' });
    const sent = await bot({ timeoutMs: 100 }).send({ channel: 'general', message: 'slow' });
    expect(sent.id).not.toBe('late');
    expect(slack.requests).toHaveLength(2);
  });

  it('counts the answer body in timeoutMs: a body that never ends is a timeout, retried', async () => {
    slack.fail({ status: 200, dripMs: 50 }, { status: 200, dripMs: 50 });
    const started = Date.now();
    const error = await rejection(
      bot({ timeoutMs: 300, retry: { attempts: 2, baseMs: 1, capMs: 1 } }).send({
        channel: 'general',
        message: 'x',
      }),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as Error).message).toContain('no answer within 300 ms');
    expect(slack.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses an answer over 1 MiB without reading it all, and does not retry it', async () => {
    slack.fail({ status: 200, body: `{"ok":true,"ts":"1.2","pad":"${'x'.repeat(2 * 1024 * 1024)}"}` });
    const error = await rejection(bot().send({ channel: 'general', message: 'x' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as Error).message).toContain('the answer (HTTP 200) is larger than 1048576 bytes');
    expect(slack.requests).toHaveLength(1);
  });

  it('stops with a CancelledError when the signal aborts', async () => {
    // Retry-After makes the wait 10 s for sure (a jittered wait could be shorter than the 50 ms below).
    slack.fail({ status: 500, retryAfter: '10' }, { status: 500 }, { status: 500 });
    const controller = new AbortController();
    const chat = bot({ retry: { attempts: 5, baseMs: 10_000, capMs: 10_000 } });
    setTimeout(() => controller.abort(), 50);
    const error = await rejection(
      chat.send({ channel: 'general', message: 'x' }, { signal: controller.signal }),
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect(slack.requests).toHaveLength(1);
  });

  it('does not retry other 4xx answers', async () => {
    slack.fail({ status: 403, body: 'forbidden' });
    const error = await rejection(bot().send({ channel: 'general', message: 'x' }));
    expect((error as UpstreamError).status).toBe(403);
    expect(slack.requests).toHaveLength(1);
  });

  it('needs exactly one of token and webhookUrl', () => {
    expect(() => new SlackChat({})).toThrow(/exactly one of options.token/);
    expect(() => new SlackChat({ token: 'a', webhookUrl: 'http://x' })).toThrow(TypeError);
    expect(() => new SlackChat({ token: 'a', retry: { attempts: 0 } })).toThrow(/retry.attempts/);
  });
});

describe('SlackChat with an incoming webhook', () => {
  it('posts { text } and accepts the "ok" answer', async () => {
    const sent = await new SlackChat({ webhookUrl: slack.webhookUrl, retry: fastRetry }).send({
      channel: 'ops',
      message: 'Hi *there*',
    });
    expect(sent).toEqual({});
    expect(slack.requests[0]!.json).toEqual({ text: 'Hi *there*' });
    expect(slack.posted).toEqual([{ channel: '#webhook', text: 'Hi *there*' }]);
  });

  it('reports Slack webhook errors with their code', async () => {
    const chat = new SlackChat({ webhookUrl: `${slack.url}services/T000/B000/GONE`, retry: fastRetry });
    const error = await rejection(chat.send({ channel: 'ops', message: 'x' }));
    expect((error as Error).message).toContain('no_service');
    expect(slack.requests).toHaveLength(1);
  });

  it('retries a 500 from the webhook', async () => {
    slack.fail({ status: 500, body: 'internal' });
    await new SlackChat({ webhookUrl: slack.webhookUrl, retry: fastRetry }).send({
      channel: 'ops',
      message: 'x',
    });
    expect(slack.requests).toHaveLength(2);
  });
});

describe('WebhookChat', () => {
  it('posts { channel, message } with the given headers and returns the receiver id', async () => {
    const chat = new WebhookChat({
      url: slack.genericUrl,
      headers: { authorization: 'Bearer hook' },
      retry: fastRetry,
    });
    const sent = await chat.send({ channel: 'alerts', message: 'disk full' });
    expect(sent).toEqual({ id: 'm1' });
    const request = slack.requests[0]!;
    expect(request.json).toEqual({ channel: 'alerts', message: 'disk full' });
    expect(request.headers.authorization).toBe('Bearer hook');
    expect(request.headers['content-type']).toMatch(/^application\/json/);
  });

  it('retries 429 and 5xx, but not a 400', async () => {
    slack.fail({ status: 429, retryAfter: '0' }, { status: 500 });
    const chat = new WebhookChat({ url: slack.genericUrl, retry: fastRetry });
    await chat.send({ channel: 'a', message: 'b' });
    expect(slack.requests).toHaveLength(3);

    slack.requests.length = 0;
    slack.fail({ status: 400, body: '{"error":"bad"}' });
    const error = await rejection(chat.send({ channel: 'a', message: 'b' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as Error).message).toContain('"a"');
    expect((error as Error).message).toContain('HTTP 400');
    expect(slack.requests).toHaveLength(1);
  });

  it('uses the fetch it is given', async () => {
    const seen: string[] = [];
    const chat = new WebhookChat({
      url: slack.genericUrl,
      fetch: (input, init) => {
        seen.push(input instanceof Request ? input.url : String(input));
        return fetch(input, init);
      },
    });
    await chat.send({ channel: 'a', message: 'b' });
    expect(seen).toEqual([slack.genericUrl]);
  });

  it('needs a url', () => {
    expect(() => new WebhookChat({ url: '' })).toThrow(/options.url/);
  });

  it('refuses a url that is no http or https URL when built, naming it (each send failed after its retries)', () => {
    expect(() => new WebhookChat({ url: 'hooks.example.com/chat' })).toThrow(
      'WebhookChat: url must be an http or https URL such as "http://127.0.0.1:8080/", not a URL (got "hooks.example.com/chat")',
    );
    expect(() => new WebhookChat({ url: 'ftp://x/' })).toThrow(/^WebhookChat: url .*not ftp:/);
    expect(() => new SlackChat({ webhookUrl: 'nope' })).toThrow(/^SlackChat: webhookUrl must be/);
    expect(() => new SlackChat({ token: 'a', baseUrl: 'nope' })).toThrow(/^SlackChat: baseUrl must be/);
  });
});
