import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { z } from 'zod';
import { Engine, type ActionContext, type ActionDefinition, type RunEvent } from '../../src/index.js';

const opened: { db: PostgresDatabase; stop: () => Promise<void> }[] = [];
afterEach(async () => {
  for (const { db, stop } of opened.splice(0)) {
    await stop();
    await db.close();
  }
});

function chain(name: string, length: number) {
  return {
    name,
    steps: Array.from({ length }, (_, i) => ({
      name: `s${i}`,
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'test',
        action: 'echo',
        input_data: { n: i, ...(i > 0 ? { prev: `{{s${i - 1}.n}}` } : {}) },
      },
    })),
    wires: [],
  };
}

const echo = {
  provider: 'platform',
  module: 'test',
  action: 'echo',
  input: z.object({ n: z.number(), prev: z.number().optional() }),
  run: (input: { n: number; prev?: number }, context: ActionContext) => ({
    n: input.n,
    prev: input.prev ?? null,
    key: context.idempotencyKey,
  }),
} satisfies ActionDefinition;

async function open(): Promise<{ engine: Engine; db: PostgresDatabase }> {
  const db = await openPostgres();
  const engine = new Engine({
    storage: db.storage,
    queue: db.queue,
    actions: [echo as unknown as ActionDefinition],
  });
  const worker = engine.work({ concurrency: 2, triggers: false });
  opened.push({ db, stop: () => worker.stop() });
  return { engine, db };
}

describe('durable runs on PGlite', () => {
  it('runs a chain of steps through the queue, with events in order', async () => {
    const { engine } = await open();
    await engine.workflows.create(chain('c', 3));
    const handle = await engine.start('c', {});
    const events: RunEvent[] = [];
    for await (const event of handle.events) events.push(event);
    const record = await handle.result;
    expect(record.status).toBe('succeeded');
    expect(record.steps.map((s) => [s.name, s.status])).toEqual([
      ['s0', 'succeeded'],
      ['s1', 'succeeded'],
      ['s2', 'succeeded'],
    ]);
    expect(record.steps[2]!.output).toEqual({ n: 2, prev: 1, key: `${record.id}:s2` });
    expect(events.map((e) => e.type + ('step' in e ? ':' + e.step : ''))).toEqual([
      'run.started',
      'step.started:s0',
      'step.succeeded:s0',
      'step.started:s1',
      'step.succeeded:s1',
      'step.started:s2',
      'step.succeeded:s2',
      'run.finished',
    ]);
    expect(await engine.getRun(record.id)).toEqual(record);
  }, 30_000);
});
