import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import {
  Engine,
  MemoryStorage,
  type RunRecord,
  type StorageAdapter,
  type Workflow,
} from '../../src/index.js';
import { reachServer, testSchemas } from './server.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const ROWS = 5_000;

/** `make` outputs ROWS rows; `wait` holds them past a save of the running run, then counts them. */
function engineOn(storage: StorageAdapter): Engine {
  const engine = new Engine({ storage });
  engine.actions.register({
    provider: 'test',
    module: 'big',
    action: 'make',
    input: z.object({}),
    run: () => ({
      rows: Array.from({ length: ROWS }, (_, i) => ({ id: i, name: `row ${i}`, even: i % 2 === 0 })),
    }),
  });
  engine.actions.register({
    provider: 'test',
    module: 'big',
    action: 'wait',
    input: z.object({ rows: z.array(z.unknown()) }),
    run: async (input) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return { count: input.rows.length };
    },
  });
  return engine;
}

const workflow: Workflow = {
  name: 'big',
  steps: [
    {
      name: 'make',
      type: 'l2',
      l2_data: { provider: 'test', module: 'big', action: 'make', input_data: {} },
    },
    {
      name: 'wait',
      type: 'l2',
      l2_data: { provider: 'test', module: 'big', action: 'wait', input_data: { rows: '{{make.rows}}' } },
    },
  ],
  wires: [],
  workflow_output: { name: 'out', output_data: { n: '{{wait.count}}' } },
};

/** A record without what differs between two runs of the same workflow. */
function comparable(record: RunRecord): unknown {
  return {
    ...record,
    id: 'id',
    started_at: 'time',
    finished_at: record.finished_at && 'time',
    steps: record.steps.map((step) => ({
      ...step,
      started_at: 'time',
      finished_at: step.finished_at && 'time',
    })),
  };
}

describe.skipIf(url === undefined)('run records of in-process runs on Postgres storage', () => {
  it('saves finished steps with their outputs while the run goes on, and the whole record at its end', async () => {
    const db = await openPostgres(url!, { schema: schemas.next() });
    try {
      const engine = engineOn(db.storage);
      await engine.workflows.create(workflow);
      const running = await engine.start('big');
      // The record saved while `wait` holds the rows (saves come every 250 ms).
      let seen: RunRecord | undefined;
      for (let i = 0; i < 40 && seen?.steps[0]?.status !== 'succeeded'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        seen = await db.storage.get<RunRecord>('runs', running.id);
      }
      expect(seen?.status).toBe('running');
      expect(seen?.steps.map((s) => s.status)).toEqual(['succeeded', 'running']);
      expect((seen?.steps[0]?.output as { rows: unknown[] }).rows).toHaveLength(ROWS);
      const done = await running.result;
      expect(done.status).toBe('succeeded');
      const stored = await db.storage.get<RunRecord>('runs', running.id);
      expect(stored).toEqual(done);
      expect(done.output).toEqual({ n: ROWS });

      const memory = engineOn(new MemoryStorage());
      await memory.workflows.create(workflow);
      expect(comparable(stored!)).toEqual(comparable(await memory.run('big')));
    } finally {
      await db.close();
    }
  });
});
