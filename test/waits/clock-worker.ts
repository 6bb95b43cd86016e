/**
 * A worker process for the wait tests whose clock is ahead: `WAITS_CLOCK_OFFSET_MS` milliseconds
 * are added to `Date.now()` and to every `new Date()` without arguments, before the engine loads, so
 * everything the engine reads the time with in this process is that far ahead. It opens the server
 * database (`WAITS_DB_URL`, schema `WAITS_SCHEMA`), executes queued steps (`WAITS_CONCURRENCY`,
 * default 1) until it is killed, and prints `ready` once it works.
 */
const offset = Number(process.env.WAITS_CLOCK_OFFSET_MS ?? '0');
if (!Number.isFinite(offset)) throw new Error('clock-worker: WAITS_CLOCK_OFFSET_MS is not a number');
if (offset !== 0) {
  const RealDate = Date;
  class AheadDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...(args as [string]));
    }
    static override now(): number {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = AheadDate as DateConstructor;
}

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`clock-worker: ${name} is not set`);
  return value;
};
const { openPostgres } = await import('../../src/adapters/postgres/index.js');
const { Engine } = await import('../../src/index.js');
const db = await openPostgres(env('WAITS_DB_URL'), {
  schema: env('WAITS_SCHEMA'),
  queue: { pollSeconds: 0.5, monitorSeconds: 1 },
});
const engine = new Engine({ storage: db.storage, queue: db.queue });
engine.work({
  concurrency: Number(process.env.WAITS_CONCURRENCY ?? '1'),
  triggers: false,
  onError: (error) => process.stderr.write(`worker error: ${(error as Error)?.stack ?? String(error)}\n`),
});
process.stdout.write(`ready ${new Date().toISOString()}\n`);

export {};
