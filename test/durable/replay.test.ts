import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine, type ActionDefinition } from '../../src/index.js';

const db = await openPostgres();
afterAll(() => db.close());

let release: () => void = () => undefined;
const hold = {
  provider: 'test',
  module: 'replay',
  action: 'hold',
  input: z.object({}),
  run: () => new Promise<{ held: true }>((resolve) => (release = () => resolve({ held: true }))),
} satisfies ActionDefinition;

it('a durable start replayed by another engine resolves when the run ends, past that engine’s runTimeoutMs', async () => {
  const actions = [hold as unknown as ActionDefinition];
  const a = new Engine({ storage: db.storage, queue: db.queue, actions });
  const b = new Engine({ storage: db.storage, queue: db.queue, actions, limits: { runTimeoutMs: 100 } });
  await a.workflows.create({
    name: 'held',
    steps: [{ name: 'h', type: 'l2', l2_data: { provider: 'test', module: 'replay', action: 'hold' } }],
    wires: [],
  });
  const worker = a.work({ concurrency: 1, triggers: false });
  try {
    const first = await a.start('held', {}, { key: 'slow', timeoutMs: 60_000 });
    const again = await b.start('held', {}, { key: 'slow' });
    expect(again).toMatchObject({ id: first.id, replayed: true });
    let settled = false;
    void again.result.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(settled).toBe(false);
    release();
    const record = await again.result;
    expect(record).toMatchObject({ id: first.id, status: 'succeeded', output: { h: { held: true } } });
    expect(await first.result).toEqual(record);
  } finally {
    await worker.stop();
  }
});
