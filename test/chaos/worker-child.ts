/**
 * A worker process of the chaos tests: opens the server database (`CHAOS_DB_URL`, schema
 * `CHAOS_SCHEMA`) and executes queued steps (`CHAOS_CONCURRENCY` at once) with the sink action
 * calling `CHAOS_SINK`, until it is killed. It prints `ready` once it works.
 *
 * With `CHAOS_MARKERS` (a directory), it honours the crash instructions of the runs' input: at the
 * planned point it creates `<key>.<point>` (or `<once>.<point>`) there and kills itself with SIGKILL;
 * a point whose file exists was crashed at before, so the worker that takes the step over goes on.
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';
import { hookedQueue, planned, QUEUE_TIMING, sinkAction, type CrashHook } from './workflow.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`worker-child: ${name} is not set`);
  return value;
};
const markers = process.env.CHAOS_MARKERS;

const crash: CrashHook = ({ point, key, step, plan }) => {
  if (markers === undefined || !planned(plan, step, point)) return;
  try {
    closeSync(openSync(join(markers, `${plan?.once ?? key}.${point}`), 'wx'));
  } catch {
    return;
  }
  process.stdout.write(`crash ${key} ${point}\n`);
  process.kill(process.pid, 'SIGKILL');
};

const db = await openPostgres(env('CHAOS_DB_URL'), { schema: env('CHAOS_SCHEMA'), queue: QUEUE_TIMING });
const engine = new Engine({
  storage: db.storage,
  queue: hookedQueue(db.queue, crash),
  actions: [sinkAction(env('CHAOS_SINK'), crash)],
});
engine.work({
  concurrency: Number(env('CHAOS_CONCURRENCY')),
  triggers: false,
  onError: (error) => process.stderr.write(`worker error: ${(error as Error)?.stack ?? String(error)}\n`),
});
process.stdout.write('ready\n');
