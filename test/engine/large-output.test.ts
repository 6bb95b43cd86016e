import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, type RunRecord } from '../../src/index.js';

const ROWS = 100_000;

interface Row {
  id: number;
  name: string;
  amount: number;
  active: boolean;
}

function rows(): Row[] {
  return Array.from({ length: ROWS }, (_, i) => ({
    id: i,
    name: `row ${i}`,
    amount: i / 4,
    active: i % 3 === 0,
  }));
}

/**
 * An engine whose workflow `big` makes 100,000 rows in step `make`, then in step `use` waits for
 * `release()` and changes those rows in place (as a careless action might) before counting them.
 */
async function bigEngine() {
  const engine = new Engine();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const made: { rows: Row[] } = { rows: [] };
  engine.actions.register({
    provider: 'acme',
    module: 'test',
    action: 'make_rows',
    input: z.object({}),
    run: () => ({ rows: (made.rows = rows()) }),
  });
  engine.actions.register({
    provider: 'acme',
    module: 'test',
    action: 'use_rows',
    input: z.object({ rows: z.custom<Row[]>((value) => Array.isArray(value)) }),
    run: async (input) => {
      await released;
      input.rows[0]!.name = 'changed by use';
      input.rows.push({ id: -1, name: 'added by use', amount: 0, active: false });
      return { count: input.rows.length };
    },
  });
  await engine.workflows.create({
    name: 'big',
    steps: [
      {
        name: 'make',
        type: 'l2',
        l2_data: { provider: 'acme', module: 'test', action: 'make_rows', input_data: {} },
      },
      {
        name: 'use',
        type: 'l2',
        l2_data: {
          provider: 'acme',
          module: 'test',
          action: 'use_rows',
          input_data: { rows: '{{make.rows}}' },
        },
      },
    ],
    wires: [],
    workflow_output: { name: 'output', output_data: { rows: '{{make.rows}}', count: '{{use.count}}' } },
  });
  return { engine, release, made };
}

/** The record as stored, once a save shows step `make` finished and `use` running. */
async function savedWhileRunning(engine: Engine, id: string): Promise<RunRecord> {
  for (;;) {
    const record = await engine.getRun(id);
    // The save at the end of `make` may come before `use` started; a later one shows it running.
    if (record.steps[0]?.status === 'succeeded' && record.steps[1]?.status === 'running') return record;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a step with a 100,000-row output, on in-memory storage', () => {
  it('keeps every row: in the saves while the run goes on, in the result and in getRun', async () => {
    const { engine, release, made } = await bigEngine();
    const handle = await engine.start('big', {});
    const running = await savedWhileRunning(engine, handle.id);
    expect(running.status).toBe('running');
    expect(running.steps.map((s) => [s.name, s.status])).toEqual([
      ['make', 'succeeded'],
      ['use', 'running'],
    ]);
    expect((running.steps[0]!.output as { rows: Row[] }).rows).toEqual(rows());
    release();

    const result = await handle.result;
    expect(result.status).toBe('succeeded');
    // The run's own result holds the step's output itself, not a copy.
    expect((result.steps[0]!.output as { rows: Row[] }).rows).toBe(made.rows);
    expect(result.output).toEqual({ rows: made.rows, count: ROWS + 1 });

    const stored = await engine.getRun(handle.id);
    expect(stored.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(stored.output).toEqual({ rows: made.rows, count: ROWS + 1 });
    // A run list shows its summary only.
    const listed = (await engine.listRuns({ workflow: 'big' })).runs;
    expect(listed.map((run) => run.id)).toEqual([handle.id]);
    expect(Object.keys(listed[0]!)).toEqual([
      'id',
      'workflow',
      'status',
      'started_at',
      'finished_at',
      'error',
    ]);
  });

  it('shows a step output as it was saved after the step finished, not as a later step changed it', async () => {
    const { engine, release, made } = await bigEngine();
    const handle = await engine.start('big', {});
    await savedWhileRunning(engine, handle.id);
    release();
    await handle.result;
    // `use` changed the rows in place after `make`'s record was saved: the record keeps them as made.
    expect(made.rows[0]!.name).toBe('changed by use');
    const stored = await engine.getRun(handle.id);
    const saved = (stored.steps[0]!.output as { rows: Row[] }).rows;
    expect(saved).toHaveLength(ROWS);
    expect(saved[0]).toEqual({ id: 0, name: 'row 0', amount: 0, active: true });
    // The workflow output was resolved at the end, from the rows as they were then.
    expect((stored.output as { rows: Row[] }).rows[0]!.name).toBe('changed by use');
  });

  it('hands out copies: changing a record read, or the run result, changes nothing stored', async () => {
    const { engine, release } = await bigEngine();
    release();
    const result = await engine.run('big', {});
    const read = await engine.getRun(result.id);
    const before = structuredClone(read);
    const readRows = (read.steps[0]!.output as { rows: Row[] }).rows;
    expect(readRows.length).toBeGreaterThanOrEqual(ROWS);
    readRows[1]!.name = 'changed by a reader';
    readRows.length = 10;
    read.status = 'failed';
    const resultRows = (result.steps[0]!.output as { rows: Row[] }).rows;
    resultRows[2]!.name = 'changed in the result';
    resultRows.pop();

    const again = await engine.getRun(result.id);
    expect(again).toEqual(before);
    expect((again.steps[0]!.output as { rows: Row[] }).rows[1]!.name).toBe('row 1');
  });
});
