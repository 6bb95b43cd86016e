/** Shared helpers for the benchmarks. */
import { performance } from 'node:perf_hooks';
import { inspect, isDeepStrictEqual } from 'node:util';
import type { PGlite } from '@electric-sql/pglite';
import { openPostgres, type PostgresDatabase } from '../src/adapters/postgres/index.js';

/**
 * True under `npm run bench -- --smoke` (`bench/run.ts` passes `--smoke` on, and sets
 * `STEPWIRE_BENCH_SMOKE=1`): every benchmark runs at a tiny size and checks its results, so CI
 * catches a benchmark that broke; its timings mean nothing then.
 */
export const SMOKE = process.argv.includes('--smoke') || process.env['STEPWIRE_BENCH_SMOKE'] === '1';

/** `full`, or `smoke` under {@link SMOKE}. */
export function sized(full: number, smoke: number): number {
  return SMOKE ? smoke : full;
}

/** Fails the benchmark (full size or smoke) when a result is not what it must be. */
export function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`benchmark check failed: ${what}`);
}

/** Fails the benchmark unless `actual` deep-equals `expected`. */
export function checkEqual(actual: unknown, expected: unknown, what: string): void {
  if (!isDeepStrictEqual(actual, expected))
    throw new Error(
      `benchmark check failed: ${what}\n  expected ${inspect(expected, { depth: 4 })}\n  got      ${inspect(actual, { depth: 4 })}`,
    );
}

/** Milliseconds one call takes. */
export async function time(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** The median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Median time in ms of each function, run in turns (so load from elsewhere hits all alike), after
 * `warmup` rounds that are not counted.
 */
export function medians(fns: Record<string, () => unknown>, runs = 15, warmup = 3): Record<string, number> {
  if (SMOKE) [runs, warmup] = [1, 0];
  const names = Object.keys(fns);
  const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < warmup + runs; i++) {
    for (let n = 0; n < names.length; n++) {
      const name = names[(n + i) % names.length]!;
      const start = performance.now();
      fns[name]!();
      if (i >= warmup) times[name]!.push(performance.now() - start);
    }
  }
  return Object.fromEntries(names.map((name) => [name, median(times[name]!)]));
}

/** Prints a titled table of rows. */
export function printTable(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
}

/** The PostgreSQL server the benchmarks measure: `STEPWIRE_PG_URL`, or the local default. */
export const SERVER_URL = process.env.STEPWIRE_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** A one-connection pool to the server, or undefined (with a notice) when it cannot be reached. */
export async function reachServer(): Promise<import('pg').Pool | undefined> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: SERVER_URL, max: 1 });
  pool.on('error', () => undefined);
  try {
    await pool.query('select 1');
    return pool;
  } catch (error) {
    await pool.end().catch(() => undefined);
    console.log(
      `notice: could not reach ${SERVER_URL} (${(error as Error).message}); the server is left out`,
    );
    return undefined;
  }
}

let sharedPglite: Promise<PGlite> | undefined;

/**
 * A PGlite database in memory for a benchmark: its own, or under {@link SMOKE} one PGlite shared by
 * every benchmark of the process (making one takes seconds), each caller in a schema of its own.
 */
export async function openPglite(schema: string): Promise<PostgresDatabase> {
  if (!SMOKE) return openPostgres();
  return openPostgres({ pglite: await smokePglite() }, { schema });
}

/** The one PGlite instance the benchmarks of a smoke run share (made at the first call). */
export function smokePglite(): Promise<PGlite> {
  return (sharedPglite ??= import('@electric-sql/pglite').then(({ PGlite }) => PGlite.create()));
}

/** Closes the shared PGlite, if one was made. */
export async function closeSharedPglite(): Promise<void> {
  if (sharedPglite) await (await sharedPglite).close();
}
