/**
 * examples/invoices e-mails the invoice to the customer: through `SmtpMail` (nodemailer) to a real
 * SMTP server on 127.0.0.1 (`smtp-server`), the message read back with `mailparser`: addressed to the
 * customer's e-mail column, the PDF attached byte for byte as the `pdf` step made it and as it was
 * uploaded. `send_invoice` (its child run) mails it too; a customer without an address gets no mail.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryFileStore, type RunRecord } from '../../src/index.js';
import { SmtpMail, loadProject } from '../../src/node/index.js';
import { decodeBase64 } from '../../src/pdf/base64.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A real SMTP server on 127.0.0.1 keeping each message it accepts, parsed, with its envelope. */
async function smtpServer(): Promise<{ port: number; received: { rcpt: string[]; mail: ParsedMail }[] }> {
  const received: { rcpt: string[]; mail: ParsedMail }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          received.push({ rcpt: session.envelope.rcptTo.map((r) => r.address), mail });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, received };
}

async function project() {
  const smtp = await smtpServer();
  const files = new MemoryFileStore();
  const mail = new SmtpMail({
    host: '127.0.0.1',
    port: smtp.port,
    from: 'Stepwire Supplies <billing@example.com>',
  });
  const { engine, problems } = await loadProject('examples/invoices', {
    engineOptions: { mail, files: { memory: files } },
  });
  expect(problems).toEqual([]);
  closing.push(() => engine.close());
  return { engine, smtp, files };
}

function pdfOf(run: RunRecord): Uint8Array {
  return decodeBase64((run.steps.find((s) => s.name === 'pdf')!.output as { pdf_data: string }).pdf_data);
}

async function settled(engine: { getRun(id: string): Promise<RunRecord> }, id: string): Promise<RunRecord> {
  for (let i = 0; i < 500; i++) {
    const record = await engine.getRun(id);
    if (record.status !== 'waiting' && record.status !== 'running') return record;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${id} did not end`);
}

describe('examples/invoices: the invoice e-mailed to the customer', () => {
  it('invoice sends the PDF to the customer’s address over SMTP, attached byte for byte', async () => {
    const { engine, smtp, files } = await project();
    const run = await engine.run('invoice', { customer_id: 1 });
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.steps.map((s) => [s.name, s.status])).toEqual([
      ['customer', 'succeeded'],
      ['orders', 'succeeded'],
      ['pdf', 'succeeded'],
      ['upload', 'succeeded'],
      ['notify', 'succeeded'],
      ['email', 'succeeded'],
    ]);
    const pdf = pdfOf(run);
    expect(new TextDecoder().decode(pdf.subarray(0, 5))).toBe('%PDF-');

    expect(smtp.received).toHaveLength(1);
    const { rcpt, mail } = smtp.received[0]!;
    expect(rcpt).toEqual(['ada@example.com']);
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.value : []).toEqual([
      { address: 'ada@example.com', name: '' },
    ]);
    expect(mail.from?.value).toEqual([{ address: 'billing@example.com', name: 'Stepwire Supplies' }]);
    expect(mail.replyTo?.text).toBe('billing@example.com');
    expect(mail.subject).toBe('Invoice INV-2026-1 from Stepwire Supplies Ltd');
    expect(mail.text).toContain('Dear Ada Lovelace,');
    expect(mail.text).toContain('invoice INV-2026-1 for your 3 orders');
    expect(mail.attachments).toHaveLength(1);
    const attachment = mail.attachments[0]!;
    expect(attachment.filename).toBe('invoice-1.pdf');
    expect(attachment.contentType).toBe('application/pdf');
    expect(new Uint8Array(attachment.content)).toEqual(pdf);
    // The same document as the one uploaded.
    expect(files.read('memory://files/invoice-1.pdf')).toEqual(pdf);
    // The message carries the step's idempotency key, and its id is the step's output.
    expect(mail.headers.get('x-idempotency-key')).toBe(`${run.id}:email`);
    expect(mail.messageId).toBe((run.steps.at(-1)!.output as { message_id: string }).message_id);
  });

  it('send_invoice mails the invoice its child run makes; a customer without an address is not mailed', async () => {
    const { engine, smtp } = await project();
    // Grace's orders total 80, under the approval limit: sent at once.
    const sent = await settled(engine, (await engine.run('send_invoice', { customer_id: 2 })).id);
    expect(sent.status, JSON.stringify(sent.error)).toBe('succeeded');
    expect(
      smtp.received.map(({ rcpt, mail }) => [rcpt, mail.subject, mail.attachments[0]?.filename]),
    ).toEqual([[['grace@example.com'], 'Invoice INV-2026-2 from Stepwire Supplies Ltd', 'invoice-2.pdf']]);

    await engine.catalog.append('customers', [{ id: 4, name: 'Edsger Dijkstra', city: 'Nuenen' }]);
    await engine.catalog.append('orders', [
      { order_id: 40, customer_id: 4, item: 'Chalk', amount: 3, status: 'open' },
    ]);
    const unmailed = await engine.run('invoice', { customer_id: 4 });
    expect(unmailed.status, JSON.stringify(unmailed.error)).toBe('succeeded');
    expect(unmailed.steps.find((s) => s.name === 'email')!.status).toBe('skipped');
    expect(smtp.received).toHaveLength(1);
    // An address that is no e-mail address is refused when it is written, naming the row and column.
    await expect(
      engine.catalog.append('customers', [
        { id: 5, name: 'Nobody', city: 'Nowhere', email: 'not an address' },
      ]),
    ).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: expect.stringContaining('email') })],
    });
  });
});
