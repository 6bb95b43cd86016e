/**
 * Waits inside `for_each` items: each item of a wait step waits on its own (an approval per item, a
 * timer per item), and a run_workflow step's items wait for their child runs; the step goes on once
 * every item has its outcome, and no child runs twice. In process on memory, and on the queue of the
 * PostgreSQL server (else PGlite).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine, type RunRecord, type WorkflowBody } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';
import { untilStatus } from './until.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

type Mode = 'memory' | 'queue';

async function engineFor(mode: Mode): Promise<Engine> {
  if (mode === 'memory') {
    const engine = new Engine();
    closing.push(() => engine.close());
    return engine;
  }
  const db = url ? await openPostgres(url, { schema: schemas.next() }) : await openPostgres();
  closing.push(() => db.close());
  const engine = new Engine({ storage: db.storage, queue: db.queue });
  closing.push(() => engine.close());
  const worker = engine.work({ concurrency: 2, triggers: false });
  closing.push(() => worker.stop());
  return engine;
}

/** Runs a workflow: on the queue, started and followed until it leaves `queued`/`running`. */
async function runUntilSettled(engine: Engine, mode: Mode, name: string, input: unknown): Promise<RunRecord> {
  if (mode === 'memory') return engine.run(name, input);
  const { id } = await engine.start(name, input);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const record = await engine.getRun(id);
    if (record.status !== 'queued' && record.status !== 'running') return record;
    if (Date.now() > deadline) throw new Error(`run ${id} is still ${record.status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One approval per line of an order, then a summary step. */
const perLine: WorkflowBody = {
  name: 'lines',
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: { lines: { type: 'array', items: { type: 'string' } } },
      required: ['lines'],
    },
  },
  steps: [
    {
      name: 'approve',
      type: 'wait',
      for_each: '{{input.lines}}',
      wait_data: { kind: 'approval', title: 'Buy {{item}}', assignees: { roles: ['manager'] } },
    },
    {
      name: 'summary',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { approved: '{{approve.succeeded}}' },
      },
    },
  ],
  wires: [],
};

/**
 * `purchase`, a child run waiting for a manager's approval of its item, and `order`, a for_each step
 * running one `purchase` per item of its input's `items`.
 */
async function createOrderWorkflows(engine: Engine): Promise<void> {
  await engine.workflows.create({
    ...perLine,
    name: 'purchase',
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
    },
    steps: [
      {
        name: 'approve',
        type: 'wait',
        wait_data: { kind: 'approval', title: 'Buy {{input.item}}', assignees: { roles: ['manager'] } },
      },
    ],
  });
  await engine.workflows.create({
    name: 'order',
    steps: [
      {
        name: 'buy',
        type: 'l2',
        for_each: '{{input.items}}',
        l2_data: {
          provider: 'platform',
          module: 'workflows',
          action: 'run_workflow',
          input_data: { workflow_name: 'purchase', input: { item: '{{item}}' } },
        },
      },
    ],
    wires: [],
  });
}

const manager = { id: 'm1', kind: 'user' as const, roles: ['manager'] };

describe.each<Mode>(['memory', 'queue'])('waits inside for_each items (%s)', (mode) => {
  it('each item waits for its own approval; the step goes on once all are decided, in any order', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(perLine);
    const waiting = await runUntilSettled(engine, mode, 'lines', { lines: ['desk', 'chair', 'lamp'] });
    expect(waiting.status).toBe('waiting');
    expect(waiting.steps[0]).toMatchObject({ name: 'approve', status: 'waiting' });
    const inbox = await engine.approvals.list();
    expect(inbox.map((a) => [a.title, a.item]).sort()).toEqual([
      ['Buy chair', 1],
      ['Buy desk', 0],
      ['Buy lamp', 2],
    ]);
    const byTitle = new Map(inbox.map((a) => [a.title, a.id]));
    // The last item first, then the first: the run still waits for the middle one.
    await engine.as(manager).approvals.decide(byTitle.get('Buy lamp')!, { approved: true });
    await engine.as(manager).approvals.decide(byTitle.get('Buy desk')!, { approved: false });
    await untilStatus(engine, waiting.id, 'waiting');
    expect((await engine.approvals.list()).map((a) => a.title)).toEqual(['Buy chair']);
    await engine.as(manager).approvals.decide(byTitle.get('Buy chair')!, { approved: true });
    const done = await untilStatus(engine, waiting.id, 'succeeded');
    const output = done.steps[0]!.output as { items: { approved: boolean }[]; succeeded: number };
    expect(output.items.map((i) => i.approved)).toEqual([false, true, true]);
    expect(output.succeeded).toBe(3);
    expect(done.steps[1]!.output).toEqual({ approved: 3 });
  }, 30_000);

  it('decisions on every item at once: none is lost, the step goes on once', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create(perLine);
    const lines = ['a', 'b', 'c', 'd', 'e'];
    const waiting = await runUntilSettled(engine, mode, 'lines', { lines });
    expect(waiting.status).toBe('waiting');
    const inbox = await engine.approvals.list();
    expect(inbox).toHaveLength(lines.length);
    await Promise.all(inbox.map((a) => engine.as(manager).approvals.decide(a.id, { approved: true })));
    const done = await untilStatus(engine, waiting.id, 'succeeded');
    expect(done.steps[0]!.output).toMatchObject({ succeeded: 5, failed: 0, skipped: 0 });
    expect(done.steps[1]!.output).toEqual({ approved: 5 });
  }, 30_000);

  it('timers per item: the step ends when the longest has passed, each item with its own wait', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create({
      name: 'pauses',
      steps: [
        {
          name: 'pause',
          type: 'wait',
          for_each: '{{input.seconds}}',
          wait_data: { kind: 'timer', until: '{{item}}' },
        },
      ],
      wires: [],
    });
    const started = Date.now();
    const at = (ms: number) => new Date(started + ms).toISOString();
    const waiting = await runUntilSettled(engine, mode, 'pauses', { seconds: [at(1_500), at(3_000)] });
    expect(waiting.status).toBe('waiting');
    // The step records the wait due first.
    // The step records the wait due first (the second, when the first came due already).
    expect([started + 1_500, started + 3_000]).toContain(Date.parse(waiting.steps[0]!.wait!.due_at!));
    const done = await untilStatus(engine, waiting.id, 'succeeded');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_990);
    const output = done.steps[0]!.output as { items: { waited_seconds: number }[] };
    // Each item waited from when it began (at the start) to its own time.
    // (On a queue an item begins its wait when a worker takes it, so it may wait less than its time.)
    const waited = output.items.map((i) => i.waited_seconds);
    expect(waited[0]).toBeGreaterThan(0);
    expect(waited[0]).toBeLessThan(waited[1]!);
    expect(waited[1]).toBeGreaterThanOrEqual(1.4);
  }, 30_000);

  it('items whose child runs wait: the parent goes on once every child has ended; no child runs twice', async () => {
    const engine = await engineFor(mode);
    await createOrderWorkflows(engine);
    const parent = await runUntilSettled(engine, mode, 'order', { items: ['desk', 'chair'] });
    expect(parent.status).toBe('waiting');
    expect(parent.steps[0]!.wait).toMatchObject({ kind: 'run' });
    const children = (await engine.listRuns({ workflow: 'purchase' })).runs;
    expect(children.map((r) => r.status)).toEqual(['waiting', 'waiting']);
    const inbox = await engine.approvals.list();
    const chair = inbox.find((a) => a.title === 'Buy chair')!;
    const desk = inbox.find((a) => a.title === 'Buy desk')!;
    // The child the step does not name ends first: the parent looks again and waits for the other.
    await engine.as(manager).approvals.decide(chair.id, { approved: true });
    await untilStatus(engine, parent.id, 'waiting');
    await engine.as(manager).approvals.decide(desk.id, { approved: false });
    const done = await untilStatus(engine, parent.id, 'succeeded');
    const items = (done.steps[0]!.output as { items: { approve: { approved: boolean } }[] }).items;
    expect(items.map((i) => i.approve.approved)).toEqual([false, true]);
    const after = (await engine.listRuns({ workflow: 'purchase' })).runs;
    expect(after.map((r) => r.id).sort()).toEqual(children.map((r) => r.id).sort());
    expect(after.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
  }, 30_000);

  it("every item's child run decided at once: the parent goes on once all have ended, each child once", async () => {
    const engine = await engineFor(mode);
    await createOrderWorkflows(engine);
    const parent = await runUntilSettled(engine, mode, 'order', { items: ['desk', 'chair', 'lamp'] });
    expect(parent.status).toBe('waiting');
    const inbox = await engine.approvals.list();
    expect(inbox.map((a) => a.title).sort()).toEqual(['Buy chair', 'Buy desk', 'Buy lamp']);
    await Promise.all(inbox.map((a) => engine.as(manager).approvals.decide(a.id, { approved: true })));
    const done = await untilStatus(engine, parent.id, 'succeeded');
    expect(done.steps[0]!.output).toMatchObject({ succeeded: 3, failed: 0, skipped: 0 });
    const children = (await engine.listRuns({ workflow: 'purchase' })).runs;
    expect(children.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  }, 30_000);
});
