import { describe, expect } from 'vitest';
import { contractCase } from './contract-case.js';
import type { ChatAdapter, ChatMessage } from '../adapters/types.js';
import { Engine } from '../engine/engine.js';
import { CancelledError, ValidationError } from '../errors/index.js';

/** A chat adapter under test, with a way to read back what reached the chat behind it. */
export interface ChatContractTarget {
  /** The adapter the cases call. */
  adapter: ChatAdapter;
  /** Every message the chat received so far, in the order it received them. */
  delivered(): ChatMessage[] | Promise<ChatMessage[]>;
}

/** Options of {@link describeChatContract}. */
export interface ChatContractOptions {
  /** Name shown in the test report. */
  name: string;
  /** Makes a fresh adapter whose chat has received nothing yet; called once per test. */
  create(): ChatContractTarget | Promise<ChatContractTarget>;
  /** Cleans up after each test. */
  dispose?(target: ChatContractTarget): void | Promise<void>;
  /**
   * A channel the chat accepts.
   * @default "general"
   */
  channel?: string;
  /** Abilities beyond the required ones. */
  capabilities?: {
    /**
     * Each message reaches the channel it names. `false` for a chat that posts everything to one
     * channel of its own, such as a Slack incoming webhook.
     * @default true
     */
    channels?: boolean;
    /**
     * `send` resolves with an `id` that differs from message to message.
     * @default false
     */
    ids?: boolean;
  };
  /** Tests to skip, each with the reason. */
  skip?: { reason: string; tests: string[] }[];
}

/** Text that breaks careless encoding: emoji (one of them joined), accents, scripts, markup, control characters. */
const TRICKY_TEXT =
  'Déjà vu 😀 👩‍💻 🇳🇴 — ∑ café\u0301 日本語 עברית\n' +
  '<b>bold</b> &amp; *stars* _under_ `code` <@U123> <#C1|ops> "quotes" \\back\\slash\r\n\ttab';

/**
 * The contract every chat adapter must pass: posting resolves, one channel keeps its order, text
 * arrives byte-exact, empty fields and aborted signals are refused, and `send_message` steps deliver
 * through the engine. Run it with one call from a vitest file.
 * @example
 * ```ts
 * import { describeChatContract } from 'stepwire/testing';
 * describeChatContract({
 *   name: 'memory',
 *   create: () => {
 *     const adapter = new MemoryChat();
 *     return { adapter, delivered: () => adapter.messages };
 *   },
 *   capabilities: { ids: true },
 * });
 * ```
 */
export function describeChatContract(options: ChatContractOptions): void {
  const channel = options.channel ?? 'general';
  const channels = options.capabilities?.channels ?? true;
  const test = contractCase<ChatContractTarget>(
    () => options.create(),
    options.dispose?.bind(options),
    options.skip,
  );
  /** What the chat received, with channels left out when the chat does not keep them. */
  const received = async (target: ChatContractTarget) =>
    (await target.delivered()).map((m) => (channels ? m : { message: m.message }));
  const expected = (...texts: string[]) =>
    texts.map((message) => (channels ? { channel, message } : { message }));

  describe(`chat contract: ${options.name}`, () => {
    test('posts a message and resolves with an object, its id a non-empty string when given', async (target) => {
      const sent = await target.adapter.send({ channel, message: 'Deploy done' });
      expect(sent).toBeTypeOf('object');
      if (sent.id !== undefined || options.capabilities?.ids) expect(sent.id).toMatch(/./);
      expect(await received(target)).toEqual(expected('Deploy done'));
    });

    if (options.capabilities?.ids) {
      test('gives every message its own id', async (target) => {
        const first = await target.adapter.send({ channel, message: 'one' });
        const second = await target.adapter.send({ channel, message: 'two' });
        expect(first.id).not.toEqual(second.id);
      });
    }

    test('messages to one channel arrive in the order they were sent', async (target) => {
      const texts = ['first', 'second', 'third', 'fourth', 'fifth'];
      for (const message of texts) await target.adapter.send({ channel, message });
      expect(await received(target)).toEqual(expected(...texts));
    });

    test('text arrives byte-exact: unicode, emoji, markup and control characters', async (target) => {
      await target.adapter.send({ channel, message: TRICKY_TEXT });
      const [message] = await target.delivered();
      expect(message?.message).toBe(TRICKY_TEXT);
      const encoder = new TextEncoder();
      expect(encoder.encode(message?.message)).toEqual(encoder.encode(TRICKY_TEXT));
    });

    test('refuses an empty channel or message with a ValidationError naming the field', async (target) => {
      for (const [field, message] of [
        ['channel', { channel: '', message: 'hello' }],
        ['message', { channel, message: '' }],
      ] as const) {
        const error = await refusal(target.adapter, message);
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as ValidationError).issues.map((i) => i.path)).toEqual([field]);
        expect((error as ValidationError).message).toContain(field);
      }
      expect(await target.delivered()).toEqual([]);
    });

    test('an aborted signal rejects with a CancelledError and posts nothing', async (target) => {
      const controller = new AbortController();
      controller.abort();
      const error = await refusal(target.adapter, { channel, message: 'too late' }, controller.signal);
      expect(error).toBeInstanceOf(CancelledError);
      expect(await target.delivered()).toEqual([]);
    });

    test('through the engine: a send_message step delivers its message', async (target) => {
      const engine = new Engine({ chat: target.adapter });
      await engine.workflows.create({
        name: 'notify',
        steps: [
          {
            name: 'post',
            type: 'l2',
            l2_data: {
              provider: 'chat',
              module: 'bot',
              action: 'send_message',
              input_data: { channel, message: '{{input.text}}' },
            },
          },
        ],
        wires: [],
        workflow_input: {
          name: 'input',
          input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        },
      });
      const run = await engine.run('notify', { text: TRICKY_TEXT });
      expect(run.status).toBe('succeeded');
      expect(run.output).toMatchObject({ post: { ok: true, channel } });
      expect(await received(target)).toEqual(expected(TRICKY_TEXT));
    });

    test('through the engine: an empty message fails the step with an error naming message', async (target) => {
      const engine = new Engine({ chat: target.adapter });
      await engine.workflows.create({
        name: 'silent',
        steps: [
          {
            name: 'post',
            type: 'l2',
            l2_data: {
              provider: 'chat',
              module: 'bot',
              action: 'send_message',
              input_data: { channel, message: '' },
            },
          },
        ],
        wires: [],
      });
      const run = await engine.run('silent');
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ code: 'validation_failed', step: 'post' });
      expect(run.error?.issues?.map((i) => i.path)).toEqual(['message']);
      expect(await target.delivered()).toEqual([]);
    });
  });
}

/** The error `send` throws or rejects with; fails the test when it succeeds. */
async function refusal(adapter: ChatAdapter, message: ChatMessage, signal?: AbortSignal): Promise<unknown> {
  return Promise.resolve()
    .then(() => adapter.send(message, signal ? { signal } : {}))
    .then(
      () => expect.fail(`send(${JSON.stringify(message)}) should have been refused`),
      (error: unknown) => error,
    );
}
