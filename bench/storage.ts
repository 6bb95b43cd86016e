/**
 * Durable storage against the in-memory reference: run-record writes and reads per second, and the
 * engine's overhead per step on a chain of 100 no-op `platform/dummy/dummy_task` steps (the engine
 * writes the run record when the run starts, every 250 ms while it runs, and when it ends), on
 * MemoryStorage, PGlite in memory, a PGlite directory and the PostgreSQL server (`STEPWIRE_PG_URL`,
 * by default postgres://postgres@127.0.0.1:5432/test; left out with a notice when unreachable).
 * Each figure is also given as a ratio to memory, measured in the same run.
 *
 * Run: `npm run bench -- storage` or `npx tsx bench/storage.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { isStorageError, openPostgres } from '../src/adapters/postgres/index.js';
import { Engine, MemoryStorage, type StorageAdapter, type Workflow } from '../src/index.js';
import { SMOKE, check, checkEqual, median, openPglite, printTable, sized, time } from './util.js';

const RECORDS = sized(300, 10);
const STEPS = sized(100, 10);
const RUNS = sized(15, 2);
const SERVER_URL = process.env.STEPWIRE_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';

interface Target {
  label: string;
  open(): Promise<{ storage: StorageAdapter; close(): Promise<void> } | undefined>;
}

/** A finished run record of three steps, about 1 kB of JSON. */
function record(id: string, n: number) {
  const at = new Date(Date.UTC(2030, 0, 1) + n * 1000).toISOString();
  const step = (name: string) => ({
    name,
    status: 'succeeded',
    attempts: 1,
    started_at: at,
    finished_at: at,
    output: { rows: [{ id: n, name: 'Ada Lovelace', city: 'London', total: 125.5 }] },
    error: null,
  });
  return {
    id,
    workflow: 'invoice',
    status: 'succeeded',
    input: { customer_id: n },
    output: { total: 125.5, lines: 3 },
    error: null,
    started_at: at,
    finished_at: at,
    steps: [step('read'), step('total'), step('notify')],
  };
}

function chain(n: number): Workflow {
  const steps: Workflow['steps'] = Array.from({ length: n }, (_, i) => ({
    name: `s${i}`,
    type: 'l2' as const,
    l2_data: {
      provider: 'platform',
      module: 'dummy',
      action: 'dummy_task',
      input_data: { value: i === 0 ? '{{input.value}}' : `{{s${i - 1}.value}}`, n: i },
    },
  }));
  return { name: `chain_${n}`, steps, wires: [] };
}

/** Writes/s, reads/s and microseconds per engine step on one storage. */
async function measure(storage: StorageAdapter): Promise<[number, number, number]> {
  const ids = Array.from({ length: RECORDS }, (_, i) => `run-${i}`);
  const writes = await time(async () => {
    for (const [i, id] of ids.entries()) await storage.put('runs', id, record(id, i));
  });
  const reads = await time(async () => {
    for (const id of ids) await storage.get('runs', id);
  });
  for (const [i, id] of ids.entries())
    checkEqual(await storage.get('runs', id), record(id, i), `run record ${id} reads back as written`);
  const engine = new Engine({ storage });
  await engine.workflows.create(chain(STEPS));
  const value = { id: 7, tags: ['a', 'b'] };
  const last = `s${STEPS - 1}`;
  const ran = async () => {
    const done = await engine.run(`chain_${STEPS}`, { value });
    check(done.status === 'succeeded', `the chain ran: ${JSON.stringify(done.error)}`);
    checkEqual(
      (done.output as Record<string, unknown>)[last],
      { value, n: STEPS - 1 },
      'the chain passes its value on',
    );
    return done;
  };
  for (let i = 0; i < 3; i++) {
    const done = await ran();
    checkEqual(
      await engine.getRun(done.id),
      JSON.parse(JSON.stringify(done)),
      'the stored record is the run',
    );
  }
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await time(ran));
  return [(RECORDS * 1000) / writes, (RECORDS * 1000) / reads, (median(runs) * 1000) / STEPS];
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'stepwire-bench-'));
  const schema = `stepwire_bench_${process.pid}`;
  const targets: Target[] = [
    { label: 'MemoryStorage', open: async () => ({ storage: new MemoryStorage(), close: async () => {} }) },
    { label: 'PGlite in memory', open: () => openPglite('stepwire_bench_storage') },
    // A directory is a PGlite of its own, seconds to make: the smoke run leaves it out.
    ...(SMOKE ? [] : [{ label: 'PGlite directory', open: () => openPostgres(join(dir, 'db')) }]),
    { label: 'PostgreSQL server', open: () => openServer(schema) },
  ];
  const rows: string[][] = [];
  let base: [number, number, number] | undefined;
  try {
    for (const target of targets) {
      const db = await target.open();
      if (!db) continue;
      try {
        const figures = await measure(db.storage);
        base ??= figures;
        const [writes, reads, perStep] = figures;
        rows.push([
          target.label,
          `${writes.toFixed(0)} (${(writes / base[0]).toFixed(3)}x)`,
          `${reads.toFixed(0)} (${(reads / base[1]).toFixed(3)}x)`,
          `${perStep.toFixed(1)} us (${(perStep / base[2]).toFixed(2)}x)`,
        ]);
      } finally {
        await db.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await dropSchema(schema);
  }
  printTable(
    `durable storage: ${RECORDS} run records of ~1 kB written then read one by one; chain of ${STEPS} dummy steps (median of ${RUNS})`,
    ['storage', 'record writes/s (to memory)', 'record reads/s (to memory)', 'engine per step (to memory)'],
    rows,
  );
}

async function openServer(schema: string) {
  try {
    return await openPostgres(SERVER_URL, { schema });
  } catch (error) {
    if (!isStorageError(error) || error.code !== 'unavailable') throw error;
    console.log(`notice: ${error.message}; the server is left out`);
    return undefined;
  }
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client(SERVER_URL);
  try {
    await client.connect();
    await client.query(`drop schema if exists ${client.escapeIdentifier(schema)} cascade`);
  } catch {
    // The server is unreachable: nothing was created there.
  } finally {
    await client.end().catch(() => undefined);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
