/**
 * examples/invoices `send_invoice`: an invoice above the approval limit waits for a manager's
 * approval before it is sent; one below it is sent at once; a rejected one is not sent.
 */
import { describe, expect, it } from 'vitest';
import { MemoryChat, type RunRecord } from '../../src/index.js';
import { loadProject } from '../../src/node/index.js';

async function settled(engine: { getRun(id: string): Promise<RunRecord> }, id: string): Promise<RunRecord> {
  for (let i = 0; i < 500; i++) {
    const record = await engine.getRun(id);
    if (record.status !== 'waiting' && record.status !== 'running') return record;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${id} did not end`);
}

describe('examples/invoices send_invoice', () => {
  it('sends an invoice under the limit at once; one above it waits for a manager, then is sent', async () => {
    const chat = new MemoryChat();
    const { engine } = await loadProject('examples/invoices', { engineOptions: { chat } });
    // Customer 2's orders total 80: under the limit of 100, sent at once.
    const small = await engine.run('send_invoice', { customer_id: 2 });
    expect(small.status).toBe('succeeded');
    expect(small.steps.map((s) => [s.name, s.status])).toEqual([
      ['customer', 'succeeded'],
      ['approve', 'skipped'],
      ['send', 'succeeded'],
    ]);
    expect(small.output).toMatchObject({ approved: null, sent: expect.stringContaining('invoice-2') });

    // Customer 1's orders total 179.75: the run waits, and a manager is told in #billing.
    const large = await engine.run('send_invoice', { customer_id: 1 });
    expect(large.status).toBe('waiting');
    const [approval] = await engine.approvals.list();
    expect(approval).toMatchObject({
      title: 'Send the invoice of Ada Lovelace?',
      show: { Customer: 'Ada Lovelace', Total: 179.75, Limit: 100 },
    });
    expect(chat.messages.map((m) => m.message)).toContain(
      `Approval needed: Send the invoice of Ada Lovelace? (/approvals/${approval!.id})`,
    );
    const manager = engine.as({ id: 'meg', kind: 'user', roles: ['manager'] });
    await manager.approvals.decide(approval!.id, { approved: true, comment: 'ok' });
    const sent = await settled(engine, large.id);
    expect(sent.status).toBe('succeeded');
    expect(sent.output).toMatchObject({ approved: true, sent: expect.stringContaining('invoice-1') });
    expect(chat.messages.map((m) => m.message)).toContain(
      'Invoice for Ada Lovelace is ready: memory://files/invoice-1.pdf',
    );

    // Rejected: nothing is sent.
    const before = chat.messages.length;
    const rejected = await engine.run('send_invoice', { customer_id: 1, approval_limit: 50 });
    const [again] = await engine.approvals.list();
    await manager.approvals.decide(again!.id, { approved: false, comment: 'check the desk price' });
    const ended = await settled(engine, rejected.id);
    expect(ended.steps.map((s) => [s.name, s.status])).toEqual([
      ['customer', 'succeeded'],
      ['approve', 'succeeded'],
      ['send', 'skipped'],
    ]);
    expect(chat.messages.length).toBe(before + 1); // only the approval notice
  });
});
