/**
 * Human steps: a run waits for an approval, an event or a time without holding a worker, and goes
 * on when it ends; decisions, events and timeouts commit once (the first wins). The same cases run
 * in process on memory storage and on the queue of the PostgreSQL server (else PGlite).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine, MemoryChat, MemoryMail, type WorkflowBody } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';
import { untilStatus } from './until.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const echo = (name: string, input_data: Record<string, unknown>) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
});

/** A purchase: priced, then approved by a manager (two needed when asked), then booked. */
const purchase = (required = 1, extra: Record<string, unknown> = {}): WorkflowBody => ({
  name: 'purchase',
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: { item: { type: 'string' }, amount: { type: 'number' } },
      required: ['item', 'amount'],
    },
  },
  steps: [
    echo('price', { item: '{{input.item}}', amount: '{{input.amount}}' }),
    {
      name: 'approve',
      type: 'wait',
      wait_data: {
        kind: 'approval',
        title: 'Buy {{input.item}}',
        description: 'A purchase above the limit',
        assignees: { roles: ['manager'] },
        required,
        show: { Amount: '{{price.amount}}' },
        form: { type: 'object', properties: { cost_centre: { type: 'string' } } },
        ...extra,
      },
    },
    echo('book', { approved: '{{approve.approved}}', item: '{{price.item}}' }),
  ],
  wires: [],
});

const manager = (id: string) => ({
  id,
  kind: 'user' as const,
  roles: ['manager'],
  email: `${id}@example.com`,
});

type Mode = 'memory' | 'queue';

async function engineFor(mode: Mode, chat = new MemoryChat(), mail = new MemoryMail()): Promise<Engine> {
  if (mode === 'memory') {
    const engine = new Engine({ chat, mail });
    closing.push(() => engine.close());
    return engine;
  }
  const db = url ? await openPostgres(url, { schema: schemas.next() }) : await openPostgres();
  closing.push(() => db.close());
  const engine = new Engine({ storage: db.storage, queue: db.queue, chat, mail });
  closing.push(() => engine.close());
  const worker = engine.work({ concurrency: 2, triggers: false });
  closing.push(() => worker.stop());
  return engine;
}

/** Waits until the run's stored status is `status` (a run goes on in the background). */

describe.each<Mode>(['memory', 'queue'])('waits (%s)', (mode) => {
  it('an approval stops the run until a manager approves; the run then goes on with the decision', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(purchase());
    const waiting = await engine.run('purchase', { item: 'laptop', amount: 1800 });
    expect(waiting.status).toBe('waiting');
    expect(waiting.steps.map((s) => [s.name, s.status])).toEqual([
      ['price', 'succeeded'],
      ['approve', 'waiting'],
    ]);
    const wait = waiting.steps[1]!.wait!;
    expect(wait.kind).toBe('approval');

    const inbox = await engine.as(manager('m1')).approvals.list();
    expect(inbox.map((a) => [a.id, a.title, a.show])).toEqual([[wait.id, 'Buy laptop', { Amount: 1800 }]]);
    // Someone who is not an assignee sees nothing to decide, and may not decide.
    const clerk = engine.as({ id: 'c1', kind: 'user', roles: ['clerk'] });
    expect(await clerk.approvals.list()).toEqual([]);
    await expect(clerk.approvals.decide(wait.id, { approved: true })).rejects.toMatchObject({
      code: 'forbidden',
    });

    const decided = await engine.as(manager('m1')).approvals.decide(wait.id, {
      approved: true,
      comment: 'fine',
      data: { cost_centre: 'IT' },
    });
    expect(decided.status).toBe('approved');
    const done = await untilStatus(engine, waiting.id, 'succeeded');
    expect(done.steps.map((s) => [s.name, s.status])).toEqual([
      ['price', 'succeeded'],
      ['approve', 'succeeded'],
      ['book', 'succeeded'],
    ]);
    expect(done.steps[1]!.output).toMatchObject({
      approved: true,
      timed_out: false,
      decisions: [{ by: 'm1', approved: true, comment: 'fine', data: { cost_centre: 'IT' } }],
    });
    expect(done.steps[2]!.output).toEqual({ approved: true, item: 'laptop' });
    // A decision after the end is a conflict, and changes nothing.
    await expect(
      engine.as(manager('m2')).approvals.decide(wait.id, { approved: false }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await engine.getRun(waiting.id)).steps[1]!.output).toEqual(done.steps[1]!.output);
    const audit = await engine.audit.list({ action: 'approval.decide' });
    expect(audit.entries.map((e) => [e.principal.id, e.outcome])).toEqual([
      ['c1', 'denied'],
      ['m1', 'success'],
      ['m2', 'failure'],
    ]);
  }, 60_000);

  it('two approvals needed: one is not enough, a rejection ends it; the same person counts once', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(purchase(2));
    const waiting = await engine.run('purchase', { item: 'car', amount: 30000 });
    const id = waiting.steps[1]!.wait!.id;
    await engine.as(manager('m1')).approvals.decide(id, { approved: true });
    await expect(engine.as(manager('m1')).approvals.decide(id, { approved: true })).rejects.toMatchObject({
      code: 'conflict',
    });
    expect((await engine.approvals.get(id)).status).toBe('waiting');
    expect((await engine.getRun(waiting.id)).status).toBe('waiting');
    await engine.as(manager('m2')).approvals.decide(id, { approved: false, comment: 'too dear' });
    const done = await untilStatus(engine, waiting.id, 'succeeded');
    expect(done.steps[1]!.output).toMatchObject({ approved: false, decisions: [{ by: 'm1' }, { by: 'm2' }] });
    expect(done.steps[2]!.output).toEqual({ approved: false, item: 'car' });
  }, 60_000);

  it('the person who started the run may not approve it, unless self_approval allows it', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(purchase());
    const boss = manager('boss');
    const waiting = await engine.as(boss).run('purchase', { item: 'desk', amount: 900 });
    const id = waiting.steps[1]!.wait!.id;
    await expect(engine.as(boss).approvals.decide(id, { approved: true })).rejects.toMatchObject({
      code: 'forbidden',
    });
    await engine.workflows.put(purchase(1, { self_approval: true }));
    const allowed = await engine.as(boss).run('purchase', { item: 'chair', amount: 300 });
    await engine.as(boss).approvals.decide(allowed.steps[1]!.wait!.id, { approved: true });
    await untilStatus(engine, allowed.id, 'succeeded');
  }, 60_000);

  it('a decision with data outside the form is refused naming the field, and nothing is decided', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(purchase());
    const waiting = await engine.run('purchase', { item: 'pen', amount: 2 });
    const id = waiting.steps[1]!.wait!.id;
    await expect(
      engine.approvals.decide(id, { approved: true, data: { cost_centre: 7 } }),
    ).rejects.toMatchObject({ code: 'validation_failed', issues: [{ path: 'data.cost_centre' }] });
    await expect(engine.approvals.decide(id, { approved: 'yes' } as never)).rejects.toMatchObject({
      issues: [{ path: 'approved' }],
    });
    expect((await engine.approvals.get(id)).decisions).toEqual([]);
  }, 60_000);

  it('an event wait takes an event sent before it began, and one sent after; match picks the run', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create({
      name: 'order',
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { order: { type: 'number' } } },
      },
      steps: [
        {
          name: 'paid',
          type: 'wait',
          wait_data: { kind: 'event', event: 'payment.received', match: { order: '{{input.order}}' } },
        },
        echo('ship', { amount: '{{paid.payload.amount}}' }),
      ],
      wires: [],
    });
    // Sent before the wait began: kept, and matched when it begins.
    expect(await engine.events.send('payment.received', { order: 1, amount: 10 })).toMatchObject({
      resumed: [],
    });
    const early = await engine.run('order', { order: 1 });
    const earlyDone = early.status === 'succeeded' ? early : await untilStatus(engine, early.id, 'succeeded');
    expect(earlyDone.steps[1]!.output).toEqual({ amount: 10 });

    const late = await engine.run('order', { order: 2 });
    expect(late.status).toBe('waiting');
    // Another order's payment does not end it.
    await engine.events.send('payment.received', { order: 3, amount: 1 });
    expect((await engine.getRun(late.id)).status).toBe('waiting');
    const sent = await engine.events.send('payment.received', { order: 2, amount: 20 });
    expect(sent.resumed).toEqual([late.id]);
    const lateDone = await untilStatus(engine, late.id, 'succeeded');
    expect(lateDone.steps[0]!.output).toEqual({ payload: { order: 2, amount: 20 }, timed_out: false });
    expect(lateDone.steps[1]!.output).toEqual({ amount: 20 });
  }, 60_000);

  it('a timer ends by itself; an approval not decided in time fails the step or goes on, as on_timeout says', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create({
      name: 'later',
      steps: [
        { name: 'pause', type: 'wait', wait_data: { kind: 'timer', seconds: 2 } },
        echo('after', { ok: true }),
      ],
      wires: [],
    });
    const timer = await engine.run('later', {});
    expect(timer.status).toBe('waiting');
    const timed = await untilStatus(engine, timer.id, 'succeeded');
    expect((timed.steps[0]!.output as { waited_seconds: number }).waited_seconds).toBeGreaterThanOrEqual(1);

    await engine.workflows.create({ ...purchase(1, { timeout_seconds: 1 }), name: 'strict' });
    await engine.workflows.create({
      ...purchase(1, { timeout_seconds: 1, on_timeout: 'continue' }),
      name: 'lenient',
    });
    const strict = await engine.run('strict', { item: 'a', amount: 1 });
    const lenient = await engine.run('lenient', { item: 'b', amount: 1 });
    const failed = await untilStatus(engine, strict.id, 'failed');
    expect(failed.error).toMatchObject({ code: 'timed_out', step: 'approve' });
    const went = await untilStatus(engine, lenient.id, 'succeeded');
    expect(went.steps[1]!.output).toEqual({ approved: false, decisions: [], timed_out: true });
    // Too late now: the approval has timed out.
    await expect(
      engine.approvals.decide(strict.steps[1]!.wait!.id, { approved: true }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect((await engine.approvals.get(strict.steps[1]!.wait!.id)).status).toBe('timed_out');
  }, 60_000);

  it('decisions racing: of ten at once exactly one ends the approval, the rest are conflicts', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(purchase());
    const waiting = await engine.run('purchase', { item: 'x', amount: 5 });
    const id = waiting.steps[1]!.wait!.id;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        engine.as(manager(`m${i}`)).approvals.decide(id, { approved: i % 2 === 0 }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes)
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'conflict' });
    const done = await untilStatus(engine, waiting.id, 'succeeded');
    expect((done.steps[1]!.output as { decisions: unknown[] }).decisions).toHaveLength(1);
  }, 60_000);

  it("a wait in a child workflow makes its parent wait; the parent goes on with the child's output", async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(purchase());
    await engine.workflows.create({
      name: 'order',
      steps: [
        {
          name: 'buy',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'workflows',
            action: 'run_workflow',
            input_data: { workflow_name: 'purchase', input: { item: 'desk', amount: 500 } },
          },
        },
        echo('after', { booked: '{{buy.book.approved}}' }),
      ],
      wires: [],
    });
    const parent = await engine.run('order', {});
    expect(parent.status).toBe('waiting');
    const childId = parent.steps[0]!.wait!.id;
    expect(parent.steps[0]).toMatchObject({ status: 'waiting', wait: { kind: 'run', id: childId } });
    const child = await engine.getRun(childId);
    expect(child).toMatchObject({ status: 'waiting', parent_run_id: parent.id });
    const [approval] = await engine.approvals.list();
    expect(approval!.run_id).toBe(childId);
    await engine.approvals.decide(approval!.id, { approved: true });
    const done = await untilStatus(engine, parent.id, 'succeeded');
    expect(done.steps.map((s) => [s.name, s.status])).toEqual([
      ['buy', 'succeeded'],
      ['after', 'succeeded'],
    ]);
    expect(done.steps[1]!.output).toEqual({ booked: true });
    // The child ran once: its parent took the run that waited, it did not start another.
    expect((await engine.listRuns({ workflow: 'purchase' })).runs.map((r) => r.id)).toEqual([childId]);
    expect((await engine.getRun(childId)).status).toBe('succeeded');
  }, 60_000);

  it("a child's failure after it went on fails its parent", async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create({ ...purchase(1, { timeout_seconds: 1 }), name: 'strict' });
    await engine.workflows.create({
      name: 'order',
      steps: [
        {
          name: 'buy',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'workflows',
            action: 'run_workflow',
            input_data: { workflow_name: 'strict', input: { item: 'desk', amount: 500 } },
          },
        },
      ],
      wires: [],
    });
    const parent = await engine.run('order', {});
    expect(parent.status).toBe('waiting');
    const failed = await untilStatus(engine, parent.id, 'failed');
    expect(failed.error).toMatchObject({ code: 'timed_out', step: 'buy' });
    expect(failed.error!.message).toMatch(/child run .* of workflow "strict" failed/);
  }, 60_000);

  it('an approval with notify posts its link to the chat channel and mails it, once', async () => {
    const chat = new MemoryChat();
    const mail = new MemoryMail();
    const engine = await engineFor(mode, chat, mail);
    await engine.workflows.create(
      purchase(1, {
        notify: { chat: { provider: 'chat', channel: 'approvals' }, email: { to: 'boss@example.com' } },
      }),
    );
    const waiting = await engine.run('purchase', { item: 'lamp', amount: 40 });
    const id = waiting.steps[1]!.wait!.id;
    expect(chat.messages).toEqual([
      expect.objectContaining({
        channel: 'approvals',
        message: `Approval needed: Buy lamp (/approvals/${id})`,
      }),
    ]);
    expect(mail.messages).toEqual([
      expect.objectContaining({
        to: ['boss@example.com'],
        subject: 'Approval needed: Buy lamp',
        text: expect.stringContaining(`/approvals/${id}`),
      }),
    ]);
    // Decided and gone on: nobody is told again.
    await engine.approvals.decide(id, { approved: true });
    await untilStatus(engine, waiting.id, 'succeeded');
    expect(chat.messages).toHaveLength(1);
    expect(mail.messages).toHaveLength(1);
  }, 60_000);
});

describe('stored waits are checked', () => {
  it('refuses a wait nobody could decide, a timer with both or neither time, on_timeout without a timeout', async () => {
    const engine = new Engine();
    const store = (wait_data: unknown) =>
      engine.workflows.create({
        name: 'bad',
        steps: [{ name: 'w', type: 'wait', wait_data } as never],
        wires: [],
      });
    await expect(store({ kind: 'approval', title: 't', assignees: {} })).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: 'steps[0].wait_data.assignees' })],
    });
    await expect(store({ kind: 'timer', seconds: 1, until: '2030-01-01T00:00:00Z' })).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: 'steps[0].wait_data' })],
    });
    await expect(store({ kind: 'timer' })).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(store({ kind: 'event', event: 'x', on_timeout: 'continue' })).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: 'steps[0].wait_data.on_timeout' })],
    });
    await expect(store({ kind: 'later' })).rejects.toMatchObject({ code: 'validation_failed' });
  });
});
