import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Engine,
  HttpMail,
  MailOutcomeUnknownError,
  MemoryChat,
  MemoryMail,
  UpstreamError,
  type MailMessage,
  type Workflow,
} from '../../src/index.js';

interface Seen {
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A fake mail provider on 127.0.0.1: records each request and answers with `answer`. */
async function provider(
  answer: (seen: Seen, res: ServerResponse, count: number) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = {
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      };
      seen.push(entry);
      answer(entry, res, seen.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/emails`, seen };
}

const MESSAGE: MailMessage = {
  to: ['ada@example.com'],
  cc: [],
  bcc: ['audit@example.com'],
  subject: 'Invoice 42',
  text: 'Attached.',
  attachments: [
    { file_name: 'a.pdf', content_type: 'application/pdf', data: new Uint8Array([37, 80, 68, 70, 0, 255]) },
  ],
};

function mailWorkflow(input: Record<string, unknown>, name = 'mail'): Workflow {
  return {
    name,
    steps: [
      {
        name: 'email',
        type: 'l2',
        l2_data: { provider: 'platform', module: 'email', action: 'send_email', input_data: input },
      },
    ],
    wires: [],
  } as Workflow;
}

describe('HttpMail (a provider JSON API on fetch)', () => {
  it('POSTs the message with the idempotency key, the API key and the files as base64', async () => {
    const fake = await provider((_, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"re_123"}'),
    );
    const mail = new HttpMail({ url: fake.url, apiKey: 'k-1', from: 'Billing <billing@example.com>' });
    const sent = await mail.send(MESSAGE, { idempotencyKey: 'run-1:email' });
    expect(sent).toEqual({ messageId: 're_123' });
    expect(fake.seen).toHaveLength(1);
    const { headers, body } = fake.seen[0]!;
    expect(headers['idempotency-key']).toBe('run-1:email');
    expect(headers['authorization']).toBe('Bearer k-1');
    expect(body).toEqual({
      from: 'Billing <billing@example.com>',
      to: ['ada@example.com'],
      bcc: ['audit@example.com'],
      subject: 'Invoice 42',
      text: 'Attached.',
      attachments: [
        {
          filename: 'a.pdf',
          content: Buffer.from([37, 80, 68, 70, 0, 255]).toString('base64'),
          content_type: 'application/pdf',
        },
      ],
      headers: { 'X-Idempotency-Key': 'run-1:email' },
    });
    // The same key again in this process sends nothing.
    expect(await mail.send(MESSAGE, { idempotencyKey: 'run-1:email' })).toEqual({ messageId: 're_123' });
    expect(fake.seen).toHaveLength(1);
  });

  it('reports a lost answer as an unknown outcome, a 5xx as retryable, a 4xx as final, and a refused connection as not sent', async () => {
    const fake = await provider((_, res, count) => {
      if (count === 1) res.socket?.destroy();
      else if (count === 2) res.writeHead(503).end('busy');
      else res.writeHead(422).end('{"message":"bad from"}');
    });
    const mail = new HttpMail({ url: fake.url, from: 'billing@example.com' });
    const lost = await mail.send(MESSAGE, { idempotencyKey: 'k1' }).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(MailOutcomeUnknownError);
    expect((lost as MailOutcomeUnknownError).code).toBe('outcome_unknown');
    const busy = await mail.send(MESSAGE, { idempotencyKey: 'k2' }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(UpstreamError);
    expect((busy as UpstreamError).retryable).toBe(true);
    const bad = await mail.send(MESSAGE, { idempotencyKey: 'k3' }).catch((e: unknown) => e);
    expect((bad as UpstreamError).retryable).toBe(false);
    expect((bad as Error).message).toContain('bad from');
    expect(fake.seen).toHaveLength(3);

    const closed = await provider(() => undefined);
    const port = new URL(closed.url).port;
    await closers.pop()!();
    const refused = await new HttpMail({
      url: `http://127.0.0.1:${port}/emails`,
      from: 'billing@example.com',
    })
      .send(MESSAGE, {})
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamError);
    expect((refused as Error).message).toContain('nothing was sent');
  });

  it('checks its options', () => {
    expect(() => new HttpMail({ url: 'ftp://x', from: 'a@example.com' })).toThrow(/HttpMail: url/);
    expect(() => new HttpMail({ from: 'nobody' })).toThrow(/HttpMail: from/);
  });
});

describe('send_email with MemoryMail and templates', () => {
  it('keeps the message, sends once per step execution, and renders templates (html escaped, text as is)', async () => {
    const mail = new MemoryMail();
    const engine = new Engine({ mail });
    await engine.workflows.create(
      mailWorkflow({
        to: 'ada@example.com',
        subject: 'Invoice [[.number]] for [[customer.name]]',
        text: 'Dear [[customer.name]],[[#lines]]\n- [[Item]]: [[Amount]][[/lines]]\nTotal [[lines.totals.Amount]]',
        html: '<p>Dear [[customer.name]]</p>',
        template: true,
        variables: [
          { name: 'number', value_type: 'NUMBER', value: 42 },
          { name: 'customer', value_type: 'OBJECT', value: { name: 'Ada & <Co>' } },
          {
            name: 'lines',
            value_type: 'TABLE',
            value: {
              columns: [
                { name: 'Item' },
                { name: 'Amount', type: 'number', format: { style: 'currency', currency: 'EUR' } },
              ],
              rows: [
                ['Tea', 0.1],
                ['Cake', 0.2],
              ],
            },
            totals: ['Amount'],
          },
        ],
      }),
    );
    const run = await engine.run('mail', {});
    expect(run.status).toBe('succeeded');
    expect(run.steps[0]!.output).toEqual({ message_id: '<1@memory.stepwire>' });
    expect(mail.messages).toHaveLength(1);
    const [sent] = mail.messages;
    expect(sent).toMatchObject({
      to: ['ada@example.com'],
      subject: 'Invoice 42 for Ada & <Co>',
      text: 'Dear Ada & <Co>,\n- Tea: €0.10\n- Cake: €0.20\nTotal €0.30',
      html: '<p>Dear Ada &amp; &lt;Co&gt;</p>',
      idempotencyKey: `${run.id}:email`,
    });
    // The same key again (a redelivered step) keeps nothing new.
    expect(await mail.send(sent!, { idempotencyKey: `${run.id}:email` })).toEqual({
      messageId: '<1@memory.stepwire>',
    });
    expect(mail.messages).toHaveLength(1);
  });

  it('fails naming an unclosed section in a field, a bad attachment, no body, or a header injection', async () => {
    const engine = new Engine();
    let count = 0;
    const failure = async (input: Record<string, unknown>) => {
      const name = `mail_${++count}`;
      await engine.workflows.create(mailWorkflow(input, name));
      const run = await engine.run(name, {});
      expect(run.status).toBe('failed');
      return run.steps[0]!.error;
    };
    expect(
      (await failure({ to: 'a@example.com', subject: '[[#x]]open', text: 'x', template: true }))?.issues?.[0],
    ).toMatchObject({
      code: 'unclosed_section',
      path: 'subject',
    });
    expect(
      (
        await failure({
          to: 'a@example.com',
          subject: 's',
          attachments: [{ file_name: 'a.pdf', file_data: '***' }],
        })
      )?.issues?.[0],
    ).toMatchObject({ path: 'attachments[0].file_data' });
    expect((await failure({ to: 'a@example.com', subject: 's' }))?.issues?.[0]).toMatchObject({
      path: 'text',
    });
    expect(
      (
        await failure({
          to: 'a@example.com',
          subject: 's',
          text: 'x',
          reply_to: 'a@example.com\nBcc: b@example.com',
        })
      )?.issues?.[0],
    ).toMatchObject({
      code: 'header_injection',
      path: 'reply_to',
    });
  });

  it('renders send_message with template: true', async () => {
    const chat = new MemoryChat();
    const engine = new Engine({ chat });
    await engine.workflows.create({
      name: 'note',
      steps: [
        {
          name: 'post',
          type: 'l2',
          l2_data: {
            provider: 'chat',
            module: 'bot',
            action: 'send_message',
            input_data: {
              channel: 'ops',
              message:
                'Invoice [[number]] sent[[#urgent]] (urgent)[[/urgent]]; [[^urgent]]calm[[/urgent]] <b>[[name]]</b>',
              template: true,
              variables: [
                { name: 'number', value_type: 'NUMBER', value: 7 },
                { name: 'urgent', value_type: 'BOOLEAN', value: false },
                { name: 'name', value_type: 'STRING', value: '[[number]] & co' },
              ],
            },
          },
        },
      ],
      wires: [],
    } as Workflow);
    const run = await engine.run('note', {});
    expect(run.status).toBe('succeeded');
    expect(chat.messages).toEqual([
      { channel: 'ops', message: 'Invoice 7 sent; calm <b>[[number]] & co</b>' },
    ]);
  });
});
