import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine, type RunRecord, type Workflow } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

/**
 * The run-record limit on the queue, as in process (test/engine/odd-values.test.ts): a record
 * whose steps' outputs and workflow output together would pass 64 MiB of JSON fails the run with
 * `record_too_large` and keeps no output. On the PostgreSQL server when it answers (it writes
 * records of tens of MiB faster than PGlite does), else on in-memory PGlite.
 */
const url = await reachServer();
const schemas = testSchemas(url);

const part = 'x'.repeat(1024 * 1024);
/** Steps that ran, by run and step. */
const ran: string[] = [];

let db: PostgresDatabase;
let engine: Engine;
let worker: { stop(): Promise<void> };

beforeAll(async () => {
  const where = url ? { schema: schemas.next() } : {};
  db = await openPostgres(url, { ...where, queue: { pollSeconds: 0.5 } });
  engine = new Engine({ storage: db.storage, queue: db.queue });
  engine.actions.register({
    provider: 't',
    module: 'm',
    action: 'big',
    input: z.any(),
    // 15 MiB of JSON each (under the 16 MiB of one output), one string in memory.
    run: (_input, context) => {
      ran.push(context.idempotencyKey);
      return { n: 1, parts: new Array<string>(15).fill(part) };
    },
  });
  worker = await engine.work({ concurrency: 1, triggers: false });
});
afterAll(async () => {
  await worker.stop();
  await db.close();
  await schemas.drop();
});

/** Steps `names`, each 15 MiB of output, each after the one before it. */
function chain(names: string[]): Workflow['steps'] {
  return names.map((name, i) => ({
    name,
    type: 'l2' as const,
    l2_data: {
      provider: 't',
      module: 'm',
      action: 'big',
      input_data: i === 0 ? {} : { after: `{{${names[i - 1]}.n}}` },
    },
  }));
}

/** The run's stored record: failed with `record_too_large`, no output kept. */
async function expectTooLarge(record: RunRecord): Promise<RunRecord> {
  expect(record.status).toBe('failed');
  expect(record.error).toMatchObject({
    code: 'record_too_large',
    message: expect.stringContaining('more than 64 MiB as JSON'),
  });
  expect(record.output).toBeNull();
  const stored = await engine.getRun(record.id);
  expect(stored.status).toBe('failed');
  expect(stored.error?.code).toBe('record_too_large');
  expect(stored.output).toBeNull();
  expect(stored.steps.every((step) => step.output === null)).toBe(true);
  // The record kept is small: its text is what GET /runs/{id} answers.
  expect((await engine.getRunText(record.id)).length).toBeLessThan(64 * 1024);
  return stored;
}

describe('the run-record limit on the durable queue', () => {
  it('fails a run whose steps committed by workers pass 64 MiB together; no further step starts', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    await engine.workflows.create({ name: 'accumulating', steps: chain(names), wires: [] });
    const record = await engine.run('accumulating', {});
    const stored = await expectTooLarge(record);
    // Five steps take 75 MiB: the fifth's commit ends the run, and the sixth never starts.
    expect(stored.steps.map((step) => [step.name, step.status])).toEqual(
      names.slice(0, 5).map((name) => [name, 'succeeded']),
    );
    expect(ran.filter((key) => key.startsWith(`${record.id}:`))).toHaveLength(5);
  }, 120_000);

  it('fails a run whose final record, its output with the steps, would pass 64 MiB', async () => {
    // Three steps take 45 MiB; without workflow_output the output repeats them: 90 MiB.
    await engine.workflows.create({ name: 'whole', steps: chain(['a', 'b', 'c']), wires: [] });
    await expectTooLarge(await engine.run('whole', {}));
    // A workflow_output that names one step's output four times: 15 MiB of steps and 60 of output.
    await engine.workflows.create({
      name: 'repeated',
      steps: chain(['a']),
      wires: [],
      workflow_output: {
        name: 'output',
        output_data: { w: '{{a.parts}}', x: '{{a.parts}}', y: '{{a.parts}}', z: '{{a.parts}}' },
      },
    });
    await expectTooLarge(await engine.run('repeated', {}));
  }, 120_000);

  it('keeps a record under the limit whole', async () => {
    // 30 MiB of steps, and as much again in the output (the map of their outputs): 60 MiB.
    await engine.workflows.create({ name: 'under', steps: chain(['a', 'b']), wires: [] });
    const record = await engine.run('under', {});
    expect(record.status).toBe('succeeded');
    const stored = await engine.getRun(record.id);
    expect(stored.steps.map((step) => (step.output as { parts: string[] }).parts.length)).toEqual([15, 15]);
    expect(Object.keys(stored.output as object)).toEqual(['a', 'b']);
    // A run list shows its summary, written by the queue's commits beside the record.
    const { id, workflow, status, started_at, finished_at, error } = stored;
    expect((await engine.listRuns({ workflow: 'under' })).runs).toEqual([
      { id, workflow, status, started_at, finished_at, error },
    ]);
  }, 120_000);
});
