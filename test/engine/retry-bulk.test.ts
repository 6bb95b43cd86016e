/**
 * Retry from a step and bulk actions: a retry does not execute the steps before `from_step` again
 * (counted by an action that counts its calls), on memory and on the queue (the PostgreSQL server,
 * else PGlite); a bulk cancel acts on exactly the runs it counted while new runs start.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine, type ActionDefinition, type RunRecord, type WorkflowBody } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());
const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** Calls of `acme/test/count` by step name, and whether `flaky` fails (until it is told not to). */
const calls = new Map<string, number>();
let failing = true;
const count: ActionDefinition = {
  provider: 'acme',
  module: 'test',
  action: 'count',
  input: z.object({ step: z.string(), fail: z.boolean().optional(), n: z.number().optional() }),
  run: (input: { step: string; fail?: boolean; n?: number }) => {
    calls.set(input.step, (calls.get(input.step) ?? 0) + 1);
    if (input.fail && failing) throw new Error(`${input.step} failed`);
    return { step: input.step, n: (input.n ?? 0) + 1 };
  },
} as unknown as ActionDefinition;

const step = (name: string, data: Record<string, unknown>) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'acme', module: 'test', action: 'count', input_data: { step: name, ...data } },
});

const chain: WorkflowBody = {
  name: 'chain',
  steps: [
    step('a', {}),
    step('b', { n: '{{a.n}}' }),
    step('c', { n: '{{b.n}}', fail: true }),
    step('d', { n: '{{c.n}}' }),
  ],
  wires: [],
};

type Mode = 'memory' | 'queue';

async function engineFor(mode: Mode): Promise<Engine> {
  if (mode === 'memory') {
    const engine = new Engine({ actions: [count] });
    closing.push(() => engine.close());
    return engine;
  }
  const db = url ? await openPostgres(url, { schema: schemas.next() }) : await openPostgres();
  closing.push(() => db.close());
  const engine = new Engine({ storage: db.storage, queue: db.queue, actions: [count] });
  closing.push(() => engine.close());
  const worker = engine.work({ concurrency: 4, triggers: false });
  closing.push(() => worker.stop());
  return engine;
}

describe.each<Mode>(['memory', 'queue'])('retry and bulk (%s)', (mode) => {
  it('retry from the failed step runs it and the steps after it, not the steps before', async () => {
    calls.clear();
    failing = true;
    const engine = await engineFor(mode);
    await engine.workflows.create(chain);
    const failed = await engine.run('chain', {});
    expect(failed).toMatchObject({ status: 'failed', error: { step: 'c' } });
    expect(Object.fromEntries(calls)).toEqual({ a: 1, b: 1, c: 1 });
    // The workflow changes after the run: the retry runs the definition the run had.
    await engine.workflows.put({ ...chain, steps: chain.steps.slice(0, 1) });
    failing = false;
    const retry = await engine.retry(failed.id);
    const record = await retry.result;
    expect(record).toMatchObject({ status: 'succeeded', retry_of: failed.id });
    expect(Object.fromEntries(calls)).toEqual({ a: 1, b: 1, c: 2, d: 1 });
    expect(record.steps.map((s) => [s.name, s.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
      ['c', 'succeeded'],
      ['d', 'succeeded'],
    ]);
    // The kept steps are the old run's records; the others are the new run's.
    expect(record.steps[0]).toEqual(failed.steps[0]);
    expect(record.steps[3]!.output).toEqual({ step: 'd', n: 4 });

    // From an earlier step: b, c and d run again, a does not.
    const again = await (await engine.retry(record.id, { from_step: 'b' })).result;
    expect(again.status).toBe('succeeded');
    expect(Object.fromEntries(calls)).toEqual({ a: 1, b: 2, c: 3, d: 2 });
    await expect(engine.retry(record.id, { from_step: 'nope' })).rejects.toMatchObject({
      issues: [expect.objectContaining({ path: 'from_step' })],
    });
  }, 60_000);

  it('a bulk dry run counts; the action then acts on exactly the runs it counted', async () => {
    const engine = await engineFor(mode);
    await engine.workflows.create({
      name: 'hold',
      steps: [
        { name: 'w', type: 'wait', wait_data: { kind: 'approval', title: 'x', assignees: { roles: ['r'] } } },
      ],
      wires: [],
    });
    const started: RunRecord[] = [];
    for (let i = 0; i < 20; i++) started.push(await engine.run('hold', {}));
    expect(started.every((r) => r.status === 'waiting')).toBe(true);
    const dry = await engine.bulk({
      action: 'cancel',
      filter: { workflow: 'hold', status: 'waiting' },
      dry_run: true,
    });
    expect(dry.count).toBe(20);
    expect(dry.done).toBeUndefined();
    // Runs started while the cancel goes on are not touched.
    const cancelling = engine.bulk({ action: 'cancel', runs: dry.runs });
    const late: RunRecord[] = [];
    for (let i = 0; i < 5; i++) late.push(await engine.run('hold', {}));
    const done = await cancelling;
    expect(done).toMatchObject({ count: 20, done: 20 });
    for (const run of started) expect((await engine.getRun(run.id)).status).toBe('cancelled');
    for (const run of late) expect((await engine.getRun(run.id)).status).toBe('waiting');
    // A cancelled run's approval is gone from the inbox, and takes no decision.
    expect((await engine.approvals.list()).map((a) => a.run_id).sort()).toEqual(late.map((r) => r.id).sort());
    await expect(
      engine.approvals.decide(started[0]!.steps[0]!.wait!.id, { approved: true }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await expect(engine.bulk({ action: 'erase' } as never)).rejects.toMatchObject({
      issues: expect.arrayContaining([expect.objectContaining({ path: 'action' })]),
    });
  }, 60_000);
});

it('a view needs runs.retry to retry and is audited; bulk is one audit entry', async () => {
  const engine = new Engine({
    actions: [count],
    access: {
      roles: {
        ops: { grants: ['runs.read', 'runs.retry', 'runs.cancel', 'workflow.run'] },
        viewer: { grants: ['runs.read'] },
      },
    },
  });
  closing.push(() => engine.close());
  calls.clear();
  failing = true;
  await engine.workflows.create(chain);
  const failed = await engine.run('chain', {});
  const viewer = engine.as({ id: 'v', kind: 'user', roles: ['viewer'] });
  await expect(viewer.retry(failed.id)).rejects.toMatchObject({ code: 'forbidden' });
  await expect(viewer.bulk({ action: 'retry', filter: { workflow: 'chain' } })).rejects.toMatchObject({
    code: 'forbidden',
  });
  failing = false;
  const ops = engine.as({ id: 'o', kind: 'user', roles: ['ops'] });
  const retried = await (await ops.retry(failed.id)).result;
  expect(retried.initiator).toMatchObject({ id: 'o' });
  const bulk = await ops.bulk({ action: 'retry', filter: { workflow: 'chain', status: 'failed' } });
  expect(bulk).toMatchObject({ count: 1, done: 1 });
  const audit = (await engine.audit.list()).entries.filter((e) => e.action.startsWith('run.'));
  expect(audit.map((e) => [e.principal.id, e.action, e.outcome])).toEqual([
    ['v', 'run.retry', 'denied'],
    ['v', 'run.bulk_retry', 'denied'],
    ['o', 'run.retry', 'success'],
    ['o', 'run.bulk_retry', 'success'],
  ]);
  expect(audit[3]!.detail).toMatchObject({ count: 1, done: 1 });
});
