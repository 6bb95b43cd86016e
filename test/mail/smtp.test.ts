import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, MailOutcomeUnknownError, UpstreamError, type Workflow } from '../../src/index.js';
import { SmtpMail } from '../../src/node/index.js';
import { decodeBase64 } from '../../src/pdf/base64.js';

interface FakeSmtp {
  port: number;
  received: ParsedMail[];
  raw: Buffer[];
  close(): Promise<void>;
}

const servers: FakeSmtp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A real SMTP server on 127.0.0.1 that keeps every message it accepts; `options` change its behaviour. */
async function smtpServer(options: Partial<SMTPServerOptions> = {}): Promise<FakeSmtp> {
  const received: ParsedMail[] = [];
  const raw: Buffer[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const message = Buffer.concat(chunks);
        raw.push(message);
        simpleParser(message).then(
          (parsed) => {
            received.push(parsed);
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: FakeSmtp = {
    port: (server.server.address() as AddressInfo).port,
    received,
    raw,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  servers.push(fake);
  return fake;
}

function invoiceMailWorkflow(extra: Record<string, unknown> = {}): Workflow {
  return {
    name: 'invoice_mail',
    steps: [
      {
        name: 'pdf',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'converters',
          action: 'create_pdf',
          input_data: {
            template: '<h1>Invoice [[.number]]</h1><footer><p>Page [[page]] of [[pages]]</p></footer>',
            template_type: 'html',
            variables: [{ name: 'number', value_type: 'NUMBER', value: 42 }],
          },
        },
      },
      {
        name: 'email',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'email',
          action: 'send_email',
          input_data: {
            to: ['Ada Lovelace <ada@example.com>'],
            cc: 'books@example.com',
            reply_to: 'billing@example.com',
            subject: 'Invoice 42',
            text: 'Your invoice is attached.',
            html: '<p>Your invoice is attached.</p>',
            attachments: [{ file_name: 'invoice-42.pdf', file_type: 'pdf', file_data: '{{pdf.pdf_data}}' }],
            ...extra,
          },
        },
        ...(extra['retry'] ? { retry: extra['retry'] } : {}),
      },
    ],
    wires: [],
  } as Workflow;
}

describe('send_email over SMTP (nodemailer to a real smtp-server on 127.0.0.1)', () => {
  it('delivers the message with the PDF attached byte for byte, the Message-ID from the step key', async () => {
    const smtp = await smtpServer();
    const engine = new Engine({
      mail: new SmtpMail({ host: '127.0.0.1', port: smtp.port, from: 'Billing <billing@example.com>' }),
    });
    await engine.workflows.create(invoiceMailWorkflow());
    const run = await engine.run('invoice_mail', {});
    expect(run.status).toBe('succeeded');
    const pdf = decodeBase64(
      (run.steps.find((s) => s.name === 'pdf')!.output as { pdf_data: string }).pdf_data,
    );
    const output = run.steps.find((s) => s.name === 'email')!.output as { message_id: string };

    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0]!;
    expect(mail.subject).toBe('Invoice 42');
    expect(mail.from?.value).toEqual([{ address: 'billing@example.com', name: 'Billing' }]);
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.value : []).toEqual([
      { address: 'ada@example.com', name: 'Ada Lovelace' },
    ]);
    expect(mail.cc && !Array.isArray(mail.cc) ? mail.cc.text : '').toBe('books@example.com');
    expect(mail.replyTo?.text).toBe('billing@example.com');
    expect(mail.text?.trim()).toBe('Your invoice is attached.');
    expect(mail.html).toContain('<p>Your invoice is attached.</p>');
    expect(mail.attachments).toHaveLength(1);
    const attachment = mail.attachments[0]!;
    expect(attachment.filename).toBe('invoice-42.pdf');
    expect(attachment.contentType).toBe('application/pdf');
    expect(new Uint8Array(attachment.content)).toEqual(pdf);
    expect(mail.messageId).toBe(output.message_id);
    expect(output.message_id).toMatch(/^<[0-9a-f]{40}@example\.com>$/);
    expect(mail.headers.get('x-idempotency-key')).toBe(`${run.id}:email`);
  });

  it('sends once per idempotency key in one process', async () => {
    const smtp = await smtpServer();
    const mail = new SmtpMail({ host: '127.0.0.1', port: smtp.port, from: 'billing@example.com' });
    const message = { to: ['a@example.com'], cc: [], bcc: [], subject: 'Once', text: 'x', attachments: [] };
    const first = await mail.send(message, { idempotencyKey: 'run-1:email' });
    const again = await mail.send(message, { idempotencyKey: 'run-1:email' });
    expect(again).toEqual(first);
    expect(smtp.received).toHaveLength(1);
    await mail.send(message, { idempotencyKey: 'run-2:email' });
    expect(smtp.received).toHaveLength(2);
  });

  it('reports an unknown outcome when the connection drops after the server took the message, and sends it once', async () => {
    let bodies = 0;
    const smtp = await smtpServer({
      onData(stream) {
        stream.resume();
        stream.on('end', () => {
          bodies++;
          // Never answer: drop the connection as a crash between queueing and replying would.
          setImmediate(() => sockets.forEach((socket) => socket.destroy()));
        });
      },
    });
    const sockets = new Set<import('node:net').Socket>();
    const net = await import('node:net');
    // A proxy in front of the server keeps the client sockets, so the test can cut them.
    const proxy = net.createServer((client) => {
      sockets.add(client);
      const upstream = net.connect(smtp.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as AddressInfo).port;
      const engine = new Engine({
        mail: new SmtpMail({ host: '127.0.0.1', port, from: 'billing@example.com', timeoutMs: 5000 }),
      });
      await engine.workflows.create(invoiceMailWorkflow({ retry: { attempts: 3, backoff_ms: 10 } }));
      const run = await engine.run('invoice_mail', {});
      expect(run.status).toBe('failed');
      const step = run.steps.find((s) => s.name === 'email')!;
      expect(step.error?.code).toBe('outcome_unknown');
      expect(step.error?.message).toContain('may have been sent');
      expect(step.attempts).toBe(1);
      expect(bodies).toBe(1);

      const direct = new SmtpMail({ host: '127.0.0.1', port, from: 'billing@example.com' });
      const error = await Promise.resolve(
        direct.send({ to: ['a@example.com'], cc: [], bcc: [], subject: 'x', text: 'y', attachments: [] }, {}),
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MailOutcomeUnknownError);
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('reports a refused recipient as a final upstream error and a dead server as retryable', async () => {
    const smtp = await smtpServer({
      onRcptTo(address, _session, callback) {
        const error = Object.assign(new Error(`no mailbox ${address.address}`), { responseCode: 550 });
        callback(error);
      },
    });
    const mail = new SmtpMail({ host: '127.0.0.1', port: smtp.port, from: 'billing@example.com' });
    const message = { to: ['nobody@example.com'], cc: [], bcc: [], subject: 'x', text: 'y', attachments: [] };
    const refused = await mail.send(message, {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamError);
    expect((refused as UpstreamError).retryable).toBe(false);
    expect((refused as Error).message).toContain('no mailbox nobody@example.com');

    const closedPort = smtp.port;
    await smtp.close();
    servers.length = 0;
    const dead = await new SmtpMail({ host: '127.0.0.1', port: closedPort, from: 'billing@example.com' })
      .send(message, {})
      .catch((e: unknown) => e);
    expect(dead).toBeInstanceOf(UpstreamError);
    expect((dead as UpstreamError).retryable).toBe(true);
    expect((dead as Error).message).toContain('before the message was sent');
  });

  it('refuses header injection and bad addresses before connecting, naming the field', async () => {
    const smtp = await smtpServer();
    const engine = new Engine({
      mail: new SmtpMail({ host: '127.0.0.1', port: smtp.port, from: 'billing@example.com' }),
    });
    await engine.workflows.create(
      invoiceMailWorkflow({
        subject: 'Invoice\r\nBcc: victim@example.com',
        to: ['ada@example.com', 'not an address'],
        attachments: [{ file_name: 'a.pdf\nX-Evil: 1', file_data: 'aGk=' }],
      }),
    );
    const run = await engine.run('invoice_mail', {});
    const step = run.steps.find((s) => s.name === 'email')!;
    expect(step.error?.code).toBe('validation_failed');
    expect(step.error?.issues?.map((issue) => [issue.path, issue.code])).toEqual([
      ['to[1]', 'invalid_address'],
      ['subject', 'header_injection'],
      ['attachments[0].file_name', 'header_injection'],
    ]);
    expect(smtp.received).toHaveLength(0);
    expect(() => new SmtpMail({ host: '127.0.0.1', port: smtp.port, from: 'x\r\n@y' })).toThrow(TypeError);
  });
});
