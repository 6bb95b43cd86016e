import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { createHandler } from '../../src/http/index.js';
import { Engine, type RunRecord } from '../../src/index.js';
import { reachServer, testSchemas } from './server.js';

const url = await reachServer();
const schemas = testSchemas(url);
let pglite: PGlite | undefined;
afterAll(async () => {
  await pglite?.close();
  await schemas.drop();
});

/** A database on a fresh schema, with a way to run SQL on it beside the storage. */
interface Target {
  db: PostgresDatabase;
  schema: string;
  sql(text: string): Promise<unknown>;
  close(): Promise<void>;
}

async function onPglite(): Promise<Target> {
  const client = (pglite ??= await PGlite.create());
  const schema = schemas.next();
  const db = await openPostgres({ pglite: client }, { schema });
  return { db, schema, sql: (text) => client.query(text), close: () => db.close() };
}

async function onServer(): Promise<Target> {
  const pool = new pg.Pool({ connectionString: url });
  const schema = schemas.next();
  const db = await openPostgres({ pool }, { schema });
  return {
    db,
    schema,
    sql: (text) => pool.query(text),
    close: async () => {
      await db.close();
      await pool.end();
    },
  };
}

/** A workflow whose step outputs its input's `text`: input, step output and output each hold it. */
const echo = {
  name: 'echo',
  steps: [
    {
      name: 'echo',
      type: 'l2' as const,
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { text: '{{input.text}}' },
      },
    },
  ],
  wires: [],
};

/** A workflow whose request step fails: the address is refused. */
const failing = {
  name: 'failing',
  steps: [{ name: 'call', type: 'request' as const, request_data: { url: 'http://[::1]:1/' } }],
  wires: [],
};

const summaryOf = (record: RunRecord) => ({
  id: record.id,
  workflow: record.workflow,
  status: record.status,
  started_at: record.started_at,
  finished_at: record.finished_at,
  error: record.error && { code: record.error.code, message: record.error.message },
});

const targets: [string, () => Promise<Target>][] = [['in-memory PGlite', onPglite]];
if (url) targets.push(['the PostgreSQL server', onServer]);

describe.each(targets)('run lists on %s', (_name, open) => {
  it('answer summaries of large runs from their summary column, never reading a record', async () => {
    const target = await open();
    try {
      const engine = new Engine({ storage: target.db.storage });
      await engine.workflows.create(echo);
      await engine.workflows.create(failing);
      const text = 'x'.repeat(512 * 1024);
      const records: RunRecord[] = [];
      for (let i = 0; i < 10; i++) records.push(await engine.run('echo', { text }));
      const failed = await engine.run('failing', {});
      expect(failed.status).toBe('failed');
      const newestFirst = [failed, ...records.reverse()].map(summaryOf);

      expect((await engine.listRuns()).runs).toEqual(newestFirst);
      const handler = createHandler(engine);
      const answer = await handler(new Request('http://local/runs'));
      const body = await answer.text();
      expect(answer.status).toBe(200);
      expect(JSON.parse(body)).toEqual({ runs: newestFirst });
      expect(body.length).toBeLessThan(5_000);
      // The whole record stays at GET /runs/{id}.
      const one = await handler(new Request(`http://local/runs/${records[0]!.id}`));
      expect(((await one.json()) as RunRecord).steps[0]!.output).toEqual({ text });

      const runs = `"${target.schema}".runs`;
      // Runs written before the summary column are summarized from their records.
      await target.sql(`update ${runs} set summary = null where id in ('${records[0]!.id}', '${failed.id}')`);
      expect((await engine.listRuns()).runs).toEqual(newestFirst);
      // Every other run is listed from its summary alone: its record is not read.
      await target.sql(`update ${runs} set record = '"not read"' where summary is not null`);
      expect((await engine.listRuns()).runs).toEqual(newestFirst);
      expect(
        (await engine.listRuns({ limit: 2, after: (await engine.listRuns({ limit: 5 })).next! })).runs,
      ).toEqual(newestFirst.slice(5, 7));
    } finally {
      await target.close();
    }
  }, 60_000);
});
