/**
 * 1,000 runs waiting at once hold no worker: on the queue of the PostgreSQL server one worker of
 * concurrency 1 takes each run's approval step, every run reaches `waiting`, and a plain run started
 * after them still goes through at once; a few decisions later those runs succeed. The same in
 * process on memory storage (no worker there: a waiting run holds nothing but its record).
 */
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine, type RunRecord, type WorkflowBody } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';
import { untilStatus } from './until.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());
const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const RUNS = 1_000;

const echo = (name: string, input_data: Record<string, unknown>) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
});

/** A request that waits for a manager, then is booked. */
const request: WorkflowBody = {
  name: 'request',
  workflow_input: {
    name: 'input',
    input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  },
  steps: [
    {
      name: 'approve',
      type: 'wait',
      wait_data: { kind: 'approval', title: 'Request {{input.n}}', assignees: { roles: ['manager'] } },
    },
    echo('book', { n: '{{input.n}}', approved: '{{approve.approved}}' }),
  ],
  wires: [],
};

/** A run with no wait. */
const plain: WorkflowBody = { name: 'plain', steps: [echo('only', { ok: true })], wires: [] };

const manager = { id: 'meg', kind: 'user' as const, roles: ['manager'] };

/** Every run of a workflow with a status, page by page. */
async function count(engine: Engine, workflow: string, status: RunRecord['status']): Promise<number> {
  let n = 0;
  let after: string | undefined;
  do {
    const page = await engine.listRuns({ workflow, status, limit: 1000, ...(after ? { after } : {}) });
    n += page.runs.length;
    after = page.next ?? undefined;
  } while (after);
  return n;
}

/** Starts the runs, 50 at a time; resolves with their records once each has stopped (waiting). */
async function startAll(engine: Engine): Promise<RunRecord[]> {
  const results: Promise<RunRecord>[] = [];
  for (let i = 0; i < RUNS; i += 50) {
    const handles = await Promise.all(
      Array.from({ length: Math.min(50, RUNS - i) }, (_, k) => engine.start('request', { n: i + k })),
    );
    results.push(...handles.map((handle) => handle.result));
  }
  return Promise.all(results);
}

/** The checks both modes make once the runs wait: a plain run goes through, decided runs go on. */
async function thenPlainAndDecisions(engine: Engine, waiting: RunRecord[], plainWithinMs: number) {
  expect(waiting.map((r) => r.status)).toEqual(Array<string>(RUNS).fill('waiting'));
  expect(await count(engine, 'request', 'waiting')).toBe(RUNS);
  const inbox = await engine.as(manager).approvals.list();
  expect(inbox.length).toBeGreaterThanOrEqual(Math.min(RUNS, 50));

  const t0 = performance.now();
  const ran = await engine.run('plain', {});
  const plainMs = performance.now() - t0;
  expect(ran.status).toBe('succeeded');
  expect(ran.steps[0]!.output).toEqual({ ok: true });
  expect(plainMs).toBeLessThan(plainWithinMs);

  const indices = [0, 1, 499, RUNS - 1];
  const picked = indices.map((i) => waiting[i]!);
  const t1 = performance.now();
  for (const [k, run] of picked.entries())
    await engine.as(manager).approvals.decide(run.steps[0]!.wait!.id, { approved: k % 2 === 0 });
  const done = await Promise.all(picked.map((run) => untilStatus(engine, run.id, 'succeeded')));
  const decidedMs = performance.now() - t1;
  for (const [k, record] of done.entries())
    expect(record.steps[1]!.output).toEqual({ n: indices[k], approved: k % 2 === 0 });
  expect(await count(engine, 'request', 'waiting')).toBe(RUNS - picked.length);
  return { plainMs, decidedMs };
}

describe.skipIf(url === undefined)('1,000 runs waiting on the queue', () => {
  it('one worker of concurrency 1: all reach waiting, a plain run started after them still runs, decided ones succeed', async () => {
    const schema = schemas.next();
    // The worker, and a client that starts and reads runs, each on its own connections.
    const workerDb = await openPostgres(url!, { schema });
    closing.push(() => workerDb.close());
    const worker = new Engine({ storage: workerDb.storage, queue: workerDb.queue });
    closing.push(() => worker.close());
    const working = worker.work({ concurrency: 1, triggers: false });
    closing.push(() => working.stop());
    const clientDb = await openPostgres(url!, { schema });
    closing.push(() => clientDb.close());
    const client = new Engine({ storage: clientDb.storage, queue: clientDb.queue });
    closing.push(() => client.close());
    await client.workflows.create(request);
    await client.workflows.create(plain);

    const t0 = performance.now();
    const waiting = await startAll(client);
    const allWaitingMs = performance.now() - t0;
    const { plainMs, decidedMs } = await thenPlainAndDecisions(client, waiting, 5_000);
    console.log(
      `queue: ${RUNS} runs waiting after ${(allWaitingMs / 1000).toFixed(1)} s; plain run ${plainMs.toFixed(0)} ms; 4 decided runs succeeded in ${decidedMs.toFixed(0)} ms`,
    );
  }, 120_000);
});

describe('1,000 runs waiting in process', () => {
  it('all reach waiting, a plain run started after them still runs, decided ones succeed', async () => {
    const engine = new Engine();
    closing.push(() => engine.close());
    await engine.workflows.create(request);
    await engine.workflows.create(plain);
    const t0 = performance.now();
    const waiting = await startAll(engine);
    const allWaitingMs = performance.now() - t0;
    const { plainMs, decidedMs } = await thenPlainAndDecisions(engine, waiting, 1_000);
    console.log(
      `memory: ${RUNS} runs waiting after ${(allWaitingMs / 1000).toFixed(1)} s; plain run ${plainMs.toFixed(0)} ms; 4 decided runs succeeded in ${decidedMs.toFixed(0)} ms`,
    );
  }, 60_000);
});
