/**
 * The operator console's runs page (`GET /console/runs`, through `createHandler`) over 100,000 runs
 * stored on the PostgreSQL server (`STEPWIRE_PG_URL`, by default postgres://postgres@127.0.0.1:5432/test;
 * PGlite in memory when it cannot be reached, and under `--smoke`), for each combination of its
 * filters and for a page deep in the keyset paging. Each page is timed (median) against baselines
 * measured in the same run, in turns with it: the bare SELECT of the same rows by the same filter,
 * and the rows the page shows read by primary key (what showing them costs at least). The SQL each page ran is captured from the pool and shown with its
 * query plan (`EXPLAIN ANALYZE`); the lists by workflow and status are also planned without the
 * index of migration 7, to show what it changes.
 *
 * Run: `npm run bench -- console` or `npx tsx bench/console.ts`.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { openPostgres, type PostgresDatabase } from '../src/adapters/postgres/index.js';
import { runColumns, runSummary } from '../src/adapters/run-list.js';
import { createHandler } from '../src/http/index.js';
import { Engine, type Workflow } from '../src/index.js';
import { SERVER_URL, SMOKE, check, checkEqual, median, printTable, sized, smokePglite } from './util.js';

const RUNS = sized(100_000, 400);
const WORKFLOWS = 20;
const REPEATS = sized(15, 1);
const T0 = Date.UTC(2026, 0, 1);
const ORIGIN = 'http://127.0.0.1:8787';

/** A SQL statement the storage sent, with its parameters. */
interface Sent {
  sql: string;
  params: readonly unknown[];
}

/** Where the bench's runs live: the storage's database, a raw query on it, and what the storage sent. */
interface Target {
  label: string;
  db: PostgresDatabase;
  schema: string;
  query(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** Starts recording what the storage sends; the returned function stops and returns it. */
  capture(): () => Sent[];
  close(): Promise<void>;
}

const workflowName = (w: number) => `w${String(w).padStart(2, '0')}`;
const INITIATORS = [
  { id: 'ada', kind: 'user' },
  { id: 'sam', kind: 'user' },
  { id: 'etl', kind: 'api_key' },
  undefined,
] as const;

/**
 * Run `i`: one of 20 workflows; about 85% succeeded, 7% failed, 2% cancelled; only w00 to w04
 * (approvals) ever wait, about a fifth of their runs; one a minute from 2026-01-01 on.
 */
function runRecord(i: number, id: string) {
  const w = (i * 7919) % WORKFLOWS;
  const roll = (i * 104_729) % 100;
  const status =
    w < 5 && roll < 20 ? 'waiting' : roll < 27 ? 'failed' : roll < 29 ? 'cancelled' : 'succeeded';
  const started = new Date(T0 + i * 60_000).toISOString();
  const finished = status === 'waiting' ? null : new Date(T0 + i * 60_000 + 1234).toISOString();
  const initiator = INITIATORS[i % INITIATORS.length];
  const step = (name: string, s: string) => ({
    name,
    status: s,
    attempts: 1,
    started_at: started,
    finished_at: finished,
    output: s === 'succeeded' ? { rows: [{ id: i, name: 'Ada Lovelace', total: 125.5 }] } : null,
    error: s === 'failed' ? { code: 'upstream', message: `the shop answered 503 to order ${i}` } : null,
  });
  return {
    id,
    workflow: workflowName(w),
    status,
    input: { customer_id: i % 1000 },
    output: status === 'succeeded' ? { total: 125.5, lines: 3 } : null,
    error: status === 'failed' ? { code: 'upstream', message: `the shop answered 503 to order ${i}` } : null,
    started_at: started,
    finished_at: finished,
    ...(initiator ? { initiator } : {}),
    steps: [step('read', 'succeeded'), step('charge', status === 'waiting' ? 'waiting' : status)],
  };
}

/** The server, or PGlite in memory (under `--smoke`, or when the server cannot be reached). */
async function openTarget(): Promise<Target> {
  const schema = `bench_console_${randomUUID().slice(0, 8)}`;
  let recording: Sent[] | undefined;
  if (!SMOKE) {
    const pool = new pg.Pool({ connectionString: SERVER_URL, max: 4 });
    pool.on('error', () => undefined);
    const reachable = await pool.query('select 1').then(
      () => true,
      (error: Error) => {
        console.log(`notice: could not reach ${SERVER_URL} (${error.message}); measuring PGlite instead`);
        return false;
      },
    );
    if (reachable) {
      // Every client the storage takes from the pool records what it is sent while capturing.
      const wrapped = new WeakSet<object>();
      const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient>;
      (pool as unknown as { connect: unknown }).connect = async (...args: unknown[]) => {
        // With a callback (the pool's own `query`): as it was.
        if (args.length > 0) return connect(...args);
        const client = await connect();
        if (!wrapped.has(client)) {
          wrapped.add(client);
          const query = client.query.bind(client) as (...args: unknown[]) => unknown;
          (client as unknown as { query: unknown }).query = (...args: unknown[]) => {
            if (recording && typeof args[0] === 'string')
              recording.push({ sql: args[0], params: (args[1] as unknown[] | undefined) ?? [] });
            return query(...args);
          };
        }
        return client;
      };
      const db = await openPostgres({ pool }, { schema });
      return {
        label: 'PostgreSQL server',
        db,
        schema,
        query: async (sql, params = []) => (await pool.query(sql, [...params])).rows,
        capture: () => {
          const sent: Sent[] = (recording = []);
          return () => ((recording = undefined), sent);
        },
        close: async () => {
          await db.close();
          await pool.query(
            `drop schema if exists ${schema} cascade; drop schema if exists ${schema}_jobs cascade`,
          );
          await pool.end();
        },
      };
    }
    await pool.end();
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = SMOKE ? await smokePglite() : await PGlite.create();
  const query = pglite.query.bind(pglite);
  (pglite as unknown as { query: unknown }).query = (sql: string, params?: unknown[], options?: unknown) => {
    if (recording) recording.push({ sql, params: params ?? [] });
    return query(sql, params, options as never);
  };
  const db = await openPostgres({ pglite }, { schema });
  return {
    label: 'PGlite in memory',
    db,
    schema,
    query: async (sql, params = []) => (await query<Record<string, unknown>>(sql, [...params])).rows,
    capture: () => {
      const sent: Sent[] = (recording = []);
      return () => ((recording = undefined), sent);
    },
    close: async () => {
      await db.close();
      (pglite as unknown as { query: unknown }).query = query;
      await query(`drop schema if exists ${schema} cascade`);
      await query(`drop schema if exists ${schema}_jobs cascade`);
      if (!SMOKE) await pglite.close();
    },
  };
}

/**
 * Stores the runs as `storage.put` stores a run record (its columns and summary), a thousand rows a
 * statement; a few are then put again through the storage, and must leave their rows as they were.
 */
async function seed(target: Target): Promise<string[]> {
  const ids = Array.from({ length: RUNS }, () => randomUUID());
  const table = `${target.schema}.runs`;
  for (let start = 0; start < RUNS; start += 1000) {
    const cols: unknown[][] = [[], [], [], [], [], [], []];
    for (let i = start; i < Math.min(RUNS, start + 1000); i++) {
      const record = runRecord(i, ids[i]!);
      const text = JSON.stringify(record);
      const summary = runSummary(ids[i]!, record, text);
      const columns = runColumns(summary);
      const row = [
        ids[i],
        columns.workflow,
        columns.status,
        columns.started_at,
        columns.finished_at,
        text,
        JSON.stringify({ ...summary, id: undefined }),
      ];
      row.forEach((value, c) => cols[c]!.push(value));
    }
    await target.query(
      `insert into ${table} (id, workflow, status, started_at, finished_at, record, summary)
       select * from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::json[], $7::json[])`,
      cols,
    );
  }
  await target.query(`vacuum analyze ${table}`);
  const rowOf = async (id: string) =>
    (
      await target.query(
        `select workflow, status, started_at::text, finished_at::text, record::text, summary::text from ${table} where id = $1`,
        [id],
      )
    )[0];
  for (const i of [0, Math.floor(RUNS / 2), RUNS - 1]) {
    const before = await rowOf(ids[i]!);
    await target.db.storage.put('runs', ids[i]!, runRecord(i, ids[i]!));
    checkEqual(await rowOf(ids[i]!), before, `run ${i} is stored as storage.put stores it`);
  }
  return ids;
}

/** The ids of the runs a console page lists, in order. */
function listedIds(html: string): string[] {
  return [...html.matchAll(/<td><a href="\/console\/runs\/([0-9a-f-]{36})">/g)].map((m) => m[1]!);
}

/** The plan of a statement, as `EXPLAIN (ANALYZE, BUFFERS)` gives it, in lines. */
async function plan(target: Target, sent: Sent): Promise<string[]> {
  const rows = await target.query(`explain (analyze, buffers, costs off) ${sent.sql}`, sent.params);
  return rows.map((row) => String(Object.values(row)[0]));
}

/** Milliseconds to read the rows the page shows by primary key (what showing them costs at least). */
async function byId(target: Target, ids: string[]): Promise<number> {
  const started = performance.now();
  const rows = await target.query(
    `select id, summary::text from ${target.schema}.runs where id = any($1::text[]) order by started_at desc, id desc`,
    [ids],
  );
  const ms = performance.now() - started;
  checkEqual(
    rows.map((row) => row['id']),
    ids,
    'the rows the page shows, read by id',
  );
  return ms;
}

/** Drops the index of migration 7 inside a transaction that is rolled back, and plans `sent` there. */
async function planWithoutIndex(target: Target, sent: Sent): Promise<string[]> {
  if (target.label !== 'PostgreSQL server') return ['(shown on the PostgreSQL server only)'];
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`drop index ${target.schema}.runs_workflow_status_started`);
    await client.query(`set local search_path to ${target.schema}`);
    const rows = (await client.query(`explain (analyze, buffers, costs off) ${sent.sql}`, [...sent.params]))
      .rows as Record<string, unknown>[];
    return rows.map((row) => String(Object.values(row)[0]));
  } finally {
    await client.query('rollback').catch(() => undefined);
    await client.end();
  }
}

/** Benchmark entry point (`bench/run.ts` calls it). */
export async function run(): Promise<void> {
  const target = await openTarget();
  try {
    const seeding = performance.now();
    await seed(target);
    console.log(
      `${RUNS} runs of ${WORKFLOWS} workflows stored on ${target.label} in ${((performance.now() - seeding) / 1000).toFixed(1)} s`,
    );
    const engine = new Engine({ storage: target.db.storage });
    for (let w = 0; w < WORKFLOWS; w++) {
      const workflow: Workflow = {
        name: workflowName(w),
        steps: [
          {
            name: 'read',
            type: 'l2',
            l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
          },
        ],
        wires: [],
      };
      await engine.workflows.create(workflow);
    }
    const handler = createHandler(engine);
    const page = async (query: string) => {
      const response = await handler(
        new Request(`${ORIGIN}/console/runs${query}`, { headers: { accept: 'text/html' } }),
      );
      const html = await response.text();
      check(response.status === 200, `GET /console/runs${query} answers 200, got ${response.status}`);
      return html;
    };

    // A cursor deep in the list: after the newest 5% of the runs.
    let deep: string | undefined;
    for (let skipped = 0; skipped < RUNS / 20; skipped += Math.min(1000, RUNS / 20))
      deep = (await engine.listRuns({ limit: Math.min(1000, RUNS / 20), ...(deep ? { after: deep } : {}) }))
        .next;
    check(deep !== undefined, 'a cursor into the list');
    // A run started by ada (every fourth run is), and its workflow.
    const sample = runRecord(RUNS - 4, '');
    const day = sized(24 * 60, 60);
    const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString();
    const cases: {
      label: string;
      query: Record<string, string>;
      sql: string;
      params: unknown[];
    }[] = [
      { label: 'none', query: {}, sql: 'true', params: [] },
      { label: 'workflow', query: { workflow: 'w07' }, sql: 'workflow = $1', params: ['w07'] },
      { label: 'status failed', query: { status: 'failed' }, sql: 'status = $1', params: ['failed'] },
      {
        label: 'workflow + status',
        query: { workflow: 'w07', status: 'failed' },
        sql: 'workflow = $1 and status = $2',
        params: ['w07', 'failed'],
      },
      {
        label: 'workflow + status, no match',
        query: { workflow: 'w07', status: 'waiting' },
        sql: 'workflow = $1 and status = $2',
        params: ['w07', 'waiting'],
      },
      { label: 'status, no match', query: { status: 'queued' }, sql: 'status = $1', params: ['queued'] },
      {
        label: 'initiator',
        query: { initiator: 'etl' },
        sql: "summary->'initiator'->>'id' = $1",
        params: ['etl'],
      },
      {
        label: 'workflow + initiator',
        query: { workflow: sample.workflow, initiator: 'ada' },
        sql: "workflow = $1 and summary->'initiator'->>'id' = $2",
        params: [sample.workflow, 'ada'],
      },
      {
        label: 'the last day (since, until)',
        query: { since: at(RUNS - day), until: at(RUNS) },
        sql: 'started_at >= $1 and started_at < $2',
        params: [at(RUNS - day), at(RUNS)],
      },
      {
        label: 'a day mid-way (since, until)',
        query: { since: at(RUNS / 2), until: at(RUNS / 2 + day) },
        sql: 'started_at >= $1 and started_at < $2',
        params: [at(RUNS / 2), at(RUNS / 2 + day)],
      },
      {
        label: 'workflow + status, a day mid-way',
        query: { workflow: 'w07', status: 'failed', since: at(RUNS / 2), until: at(RUNS / 2 + day) },
        sql: 'workflow = $1 and status = $2 and started_at >= $3 and started_at < $4',
        params: ['w07', 'failed', at(RUNS / 2), at(RUNS / 2 + day)],
      },
      {
        label: `deep page (after ${RUNS / 20} runs)`,
        query: { after: deep },
        sql: `(started_at, id) < (select started_at, id from ${target.schema}.runs order by started_at desc, id desc offset ${RUNS / 20 - 1} limit 1)`,
        params: [],
      },
    ];

    const rows: string[][] = [];
    const plans: string[] = [];
    for (const c of cases) {
      const query = new URLSearchParams(c.query).toString();
      const path = query ? `?${query}` : '';
      // The first answer, with the SQL it sent.
      const stop = target.capture();
      const html = await page(path);
      const sent = stop();
      const shown = listedIds(html);
      // The bare SELECT of the rows the filter selects, as the page shows them (50, newest first).
      const select = `select id, summary::text from ${target.schema}.runs where ${c.sql} order by started_at desc, id desc limit 50`;
      const expected = (await target.query(select, c.params)).map((row) => row['id']);
      checkEqual(shown, expected, `the runs page filtered by ${c.label} lists the runs the filter selects`);
      if (c.label.endsWith('no match')) check(shown.length === 0, `${c.label}: no run listed`);
      const pageTimes: number[] = [];
      const selectTimes: number[] = [];
      const byIdTimes: number[] = [];
      for (let r = 0; r < REPEATS; r++) {
        // In turns, so load from elsewhere hits all alike.
        let started = performance.now();
        await page(path);
        pageTimes.push(performance.now() - started);
        started = performance.now();
        await target.query(select, c.params);
        selectTimes.push(performance.now() - started);
        byIdTimes.push(await byId(target, shown));
      }
      const pageMs = median(pageTimes);
      const selectMs = median(selectTimes);
      const byIdMs = median(byIdTimes);
      const runQueries = sent.filter((s) => /from "[^"]+"\."runs"/.test(s.sql));
      // The storage filters all but the initiator: the page, and the counts by status.
      if (!('initiator' in c.query))
        check(runQueries.length === 2, `${c.label}: two run queries (the page, the counts), not a scan`);
      rows.push([
        c.label,
        String(shown.length),
        String(runQueries.length),
        pageMs.toFixed(1),
        selectMs.toFixed(2),
        byIdMs.toFixed(2),
        `${(pageMs / selectMs).toFixed(1)}x`,
      ]);
      plans.push(`\n--- ${c.label}: ${runQueries.length} run queries`);
      const seen = new Set<string>();
      for (const s of runQueries) {
        // One plan per statement (the pages of a scan differ only by their cursor).
        if (seen.has(s.sql)) continue;
        seen.add(s.sql);
        plans.push(`SQL: ${s.sql}\n  params: ${JSON.stringify(s.params)}`);
        const lines = await plan(target, s);
        plans.push(...lines.map((line) => `  ${line}`));
        if (!SMOKE && /"workflow" = \$\d+ and "status" = \$\d+/.test(s.sql)) {
          check(
            lines.some((line) => line.includes('runs_workflow_status_started')),
            `${c.label}: the list by workflow and status reads the index runs_workflow_status_started`,
          );
          plans.push('  without the index runs_workflow_status_started:');
          plans.push(...(await planWithoutIndex(target, s)).map((line) => `    ${line}`));
        }
      }
    }
    printTable(
      `Console runs page over ${RUNS} runs on ${target.label} (median of ${REPEATS}); baselines: the bare SELECT of the same rows by the same filter, and by id`,
      ['filter', 'runs shown', 'run queries', 'page ms', 'SELECT ms', 'by id ms', 'page / SELECT'],
      rows,
    );
    console.log('\nQuery plans (EXPLAIN ANALYZE, BUFFERS) of the SQL each page sent, the first time:');
    for (const line of plans) console.log(line);
  } finally {
    await target.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await run();
