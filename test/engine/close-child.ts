/**
 * A child process for close.test.ts: starts an engine's background work (trigger ticks, and with
 * `durable` a worker on an in-memory PGlite queue), runs a workflow, fires a schedule trigger, then
 * closes (unless `no-close`) and prints `closed`. It must then exit on its own: nothing left running.
 */
import { z } from 'zod';
import { Engine } from '../../src/index.js';
import { openPostgres } from '../../src/adapters/postgres/index.js';

const mode = process.argv[2] ?? 'memory';
const db = mode.startsWith('durable')
  ? await openPostgres(undefined, { queue: { pollSeconds: 0.5 } })
  : undefined;
const engine = new Engine(db ? { storage: db.storage, queue: db.queue } : {});
engine.actions.register({
  provider: 'test',
  module: 'close',
  action: 'note',
  input: z.looseObject({}),
  run: (input) => input,
});
await engine.workflows.create({
  name: 'note',
  steps: [
    {
      name: 'note',
      type: 'l2',
      l2_data: { provider: 'test', module: 'close', action: 'note', input_data: { at: '{{input}}' } },
    },
  ],
  wires: [],
});
await engine.triggers.create({
  name: 'every-minute',
  type: 'schedule',
  workflow_name: 'note',
  schedule_data: { cron: '* * * * *' },
});
if (mode === 'durable-pending') {
  // A run queued with no worker to take it: close() stops following it, and its result says so.
  const handle = await engine.start('note', { n: 1 });
  const result = handle.result.then(
    (record) => `result ${record.status}`,
    (error: { code?: string }) => `result rejected ${error.code}`,
  );
  await engine.close();
  console.log(await result);
  await db?.close();
  console.log('closed');
  process.exitCode = 0;
} else await workAndClose();

async function workAndClose(): Promise<void> {
  const worker = engine.work({ tickMs: 50, concurrency: 2 });
  const record = await engine.run('note', { n: 1 });
  console.log(`run ${record.status}`);
  // A tick one minute ahead fires the schedule: a run started by a trigger.
  const fired = await engine.tick(new Date(Date.now() + 61_000));
  console.log(`fired ${fired.length}`);
  if (mode === 'no-close') {
    console.log('not closing');
  } else {
    await engine.close();
    await db?.close();
    // The loop's own stop still resolves after close.
    await worker.stop();
    console.log('closed');
  }
}
