/**
 * The worked example of docs/security.md on `openPostgres` with a queue and a worker: every read and
 * write path tried by a principal outside the rows it asks for (bob, a sales person, at alice's
 * customers): the get_entity action, atlas `get`, a transform's inputs (`getEntity`) and outputs
 * (`writeEntity`), the write_entity action, and the catalog through `engine.as(p)`. Runs are started
 * on one engine and executed by a second one on the same database (a worker process, without the
 * `access` option): the policy put through `engine.access.put` on the first binds the second, and
 * the worker acts as the initiator stored in the run. On the PostgreSQL server (`STEPWIRE_PG_URL`,
 * required under CI), else on an in-memory PGlite.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import {
  Engine,
  MemorySpreadsheets,
  type GetEntityOutput,
  type Principal,
  type RunRecord,
  type WorkflowBody,
} from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';
import { alice, bob, customers, CUSTOMER_ROWS, finance, policy } from './policy-example.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A database (a schema of its own on the server, else PGlite), the engine runs start on and a worker. */
async function openCluster(order: { workerFirst?: boolean } = {}) {
  const db: PostgresDatabase = url
    ? await openPostgres(url, { schema: schemas.next() })
    : await openPostgres();
  closing.push(() => db.close());
  const sheets = new MemorySpreadsheets({ crm: { customers: CUSTOMER_ROWS.map((r) => [...r]) } });
  const engine = new Engine({ storage: db.storage, queue: db.queue, spreadsheets: sheets });
  closing.push(() => engine.close());
  // The worker process: a second engine on the same database, without the `access` option.
  const worker = new Engine({ storage: db.storage, queue: db.queue, spreadsheets: sheets });
  closing.push(() => worker.close());
  const startWorker = async () => {
    await worker.ready();
    const loop = worker.work({ concurrency: 2, triggers: false });
    closing.push(() => loop.stop());
  };
  if (order.workerFirst) await startWorker();
  await engine.catalog.registerEntity(customers);
  for (const [name, source] of Object.entries(SCRIPTS)) await engine.scripts.put(name, source);
  for (const workflow of WORKFLOWS) await engine.workflows.create(workflow);
  await engine.access.put(policy);
  if (!order.workerFirst) await startWorker();
  return { engine, worker, sheets };
}

const l2 = (name: string, action: string, input_data: Record<string, unknown>) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'catalog', module: 'action', action, metadata: {}, input_data },
});

const transform = (name: string, code_file: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'atlas' as const,
  atlas_data: {
    action: 'transform' as const,
    input_entities: ['customers'],
    input_data: { language: 'javascript', code_file },
    ...extra,
  },
});

const SCRIPTS = {
  'inputs.js':
    "console.log(JSON.stringify(getEntity('customers').map((r) => [r.id, r.owner, r.credit_limit ?? null])));",
  'take.js':
    "writeEntity('customers', [{ id: 1, name: 'Taken', owner: 'bob@example.com', region: 'north' }]);",
  'give.js':
    "writeEntity('customers', [{ id: 7, name: 'Gift', owner: 'alice@example.com', region: 'north' }]);",
};

const WORKFLOWS: WorkflowBody[] = [
  {
    name: 'read_step',
    steps: [
      l2('all', 'get_entity', { entity_name: 'customers', operation: {} }),
      l2('keyed', 'get_entity', {
        entity_name: 'customers',
        operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 1 }] },
      }),
    ],
    wires: [],
    workflow_output: {
      name: 'out',
      output_data: {
        columns: '{{all.body.table.columns}}',
        rows: '{{all.body.table.rows}}',
        keyed: '{{keyed.body.table.rows}}',
      },
    },
  },
  {
    name: 'atlas_get',
    steps: [
      {
        name: 'people',
        type: 'atlas',
        atlas_data: { action: 'get', input_entities: [{ name: 'customers' }] },
      },
    ],
    wires: [],
    workflow_output: { name: 'out', output_data: { people: '{{people}}' } },
  },
  {
    name: 'transform_in',
    steps: [
      transform('look', 'inputs.js', { output_entities: [{ name: 'customers', write_mode: 'upsert' }] }),
    ],
    wires: [],
  },
  {
    name: 'write_unseen',
    steps: [
      l2('w', 'write_entity', {
        entity_name: 'customers',
        write_mode: 'update',
        rows: [{ id: 1, name: 'Mine now' }],
      }),
    ],
    wires: [],
  },
  {
    name: 'delete_unseen',
    steps: [l2('w', 'write_entity', { entity_name: 'customers', write_mode: 'delete', rows: [{ id: 3 }] })],
    wires: [],
  },
  {
    name: 'append_other',
    steps: [
      l2('w', 'write_entity', {
        entity_name: 'customers',
        write_mode: 'append',
        rows: [{ id: 8, name: 'Planted', owner: 'alice@example.com', region: 'west' }],
      }),
    ],
    wires: [],
  },
  {
    name: 'transform_take',
    steps: [transform('t', 'take.js', { output_entities: [{ name: 'customers', write_mode: 'upsert' }] })],
    wires: [],
  },
  {
    name: 'transform_give',
    steps: [transform('t', 'give.js', { output_entities: [{ name: 'customers', write_mode: 'append' }] })],
    wires: [],
  },
];

/** A workflow started as `principal` on `engine`, run to its end by the worker. */
async function runAs(engine: Engine, principal: Principal, name: string): Promise<RunRecord> {
  const handle = await engine.as(principal).start(name, {});
  return handle.result;
}

const ids = (rows: unknown) => (rows as unknown[][]).map((r) => r[0]);

function rowsOf(output: GetEntityOutput): Record<string, unknown>[] {
  expect(output.body.error?.errors).toEqual([]);
  const { columns, rows } = output.body.table;
  return (rows ?? []).map((row) => Object.fromEntries((columns ?? []).map((c, i) => [c.name, row[i]])));
}

/** The sheet, as the service sees it. */
const sheetOf = (sheets: MemorySpreadsheets) => JSON.stringify(sheets.cells('crm', 'customers'));

describe.sequential('access on openPostgres, steps executed by a worker', () => {
  it('a run started by alice reads only her rows on the worker; its record has her as initiator', async () => {
    const { engine, worker } = await openCluster();
    const record = await runAs(engine, alice, 'read_step');
    expect(record.error).toBeNull();
    expect(record.initiator).toEqual({
      id: 'u-alice',
      kind: 'user',
      roles: ['sales'],
      email: 'alice@example.com',
    });
    const out = record.output as { columns: { name: string }[]; rows: unknown[][]; keyed: unknown[][] };
    expect(ids(out.rows)).toEqual([1, 3]);
    expect(out.columns.map((c) => c.name)).toEqual(['id', 'name', 'owner', 'region']);
    expect(ids(out.keyed)).toEqual([1]);
    // The record as stored, read by the worker's engine.
    expect((await worker.getRun(record.id)).initiator?.id).toBe('u-alice');
    const logged = await runAs(engine, alice, 'transform_in');
    expect(logged.steps[0]!.logs).toEqual(['[[1,"alice@example.com",null],[3,"alice@example.com",null]]']);
  }, 60_000);

  it("bob's reads of alice's rows find nothing on every read path", async () => {
    const { engine, worker } = await openCluster();
    const read = await runAs(engine, bob, 'read_step');
    const out = read.output as { rows: unknown[][]; keyed: unknown[][] };
    expect(ids(out.rows)).toEqual([2]);
    expect(out.keyed).toEqual([]);
    const got = await runAs(engine, bob, 'atlas_get');
    expect(got.error).toBeNull();
    const text = JSON.stringify(got.output);
    expect(text).toContain('Globex');
    for (const unseen of ['Acme', 'Initech', 'Umbrella', '12000', 'credit_limit'])
      expect(text).not.toContain(unseen);
    const looked = await runAs(engine, bob, 'transform_in');
    expect(looked.steps[0]!.logs).toEqual(['[[2,"bob@example.com",null]]']);
    // The catalog through engine.as(bob), on both engines.
    for (const on of [engine, worker]) {
      const view = on.as(bob).catalog;
      expect(
        rowsOf(await view.getEntity({ entity_name: 'customers', operation: {} })).map((r) => r.id),
      ).toEqual([2]);
      const keyed = await view.getEntity({
        entity_name: 'customers',
        operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 1 }] },
      });
      const missing = await view.getEntity({
        entity_name: 'customers',
        operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 99 }] },
      });
      expect(keyed).toEqual(missing);
      await expect(
        view.getEntity({
          entity_name: 'customers',
          operation: { order_by: [{ column: 'credit_limit', direction: 'ASC' }] },
        }),
      ).rejects.toMatchObject({ code: 'forbidden' });
      expect((await view.table('customers')).table.length).toBe(1);
    }
    // finance (no row rule) sees every row and credit_limit, on the worker too.
    expect(
      rowsOf(await worker.as(finance).catalog.getEntity({ entity_name: 'customers', operation: {} })).map(
        (r) => r.credit_limit,
      ),
    ).toEqual([5000, 12000, 800, 30000]);
  }, 60_000);

  it("bob's writes of alice's rows are refused on every write path, and nothing changes", async () => {
    const { engine, worker, sheets } = await openCluster();
    const before = sheetOf(sheets);
    const refused = async (name: string, code: string) => {
      const record = await runAs(engine, bob, name);
      expect(record.status, name).toBe('failed');
      expect(record.error?.code, `${name}: ${record.error?.message}`).toBe(code);
      expect(record.initiator?.id).toBe('u-bob');
      expect(sheetOf(sheets), name).toBe(before);
    };
    await refused('write_unseen', 'write_conflict');
    await refused('delete_unseen', 'write_conflict');
    await refused('append_other', 'forbidden');
    await refused('transform_take', 'write_conflict');
    await refused('transform_give', 'forbidden');
    for (const on of [engine, worker]) {
      const view = on.as(bob).catalog;
      await expect(view.update('customers', [{ id: 1, name: 'Mine now' }])).rejects.toMatchObject({
        code: 'write_conflict',
      });
      await expect(view.delete('customers', [{ id: 4 }])).rejects.toMatchObject({ code: 'write_conflict' });
      await expect(view.upsert('customers', [{ id: 3, name: 'Mine now' }])).rejects.toMatchObject({
        code: 'write_conflict',
      });
      await expect(
        view.append('customers', [{ id: 9, name: 'N', owner: 'carol@example.com', region: 'r' }]),
      ).rejects.toMatchObject({ code: 'forbidden' });
      await expect(view.update('customers', [{ id: 2, owner: 'alice@example.com' }])).rejects.toMatchObject({
        code: 'forbidden',
      });
      await expect(view.update('customers', [{ id: 2, credit_limit: 1 }])).rejects.toMatchObject({
        code: 'forbidden',
      });
      await expect(
        view.write([
          {
            entity: 'customers',
            mode: 'replace',
            rows: [{ id: 2, name: 'x', owner: 'bob@example.com', region: 'r' }],
          },
        ]),
      ).rejects.toMatchObject({ code: 'forbidden' });
      expect(sheetOf(sheets)).toBe(before);
    }
    // His own row he may change, through the worker's engine too.
    await worker.as(bob).catalog.update('customers', [{ id: 2, name: 'Globex Ltd' }]);
    expect(
      rowsOf(await engine.catalog.getEntity({ entity_name: 'customers', operation: {} })).map((r) => r.name),
    ).toEqual(['Acme', 'Globex Ltd', 'Initech', 'Umbrella']);
  }, 60_000);

  // A worker opened before `engine.access.put` reads the policy at each check of an initiator.
  it('a worker opened before the policy was put enforces it too', async () => {
    const { engine, sheets } = await openCluster({ workerFirst: true });
    const before = sheetOf(sheets);
    const record = await runAs(engine, bob, 'write_unseen');
    expect(sheetOf(sheets)).toBe(before);
    expect(record.error?.code).toBe('write_conflict');
    const read = await runAs(engine, bob, 'read_step');
    expect(ids((read.output as { rows: unknown[][] }).rows)).toEqual([2]);
  }, 60_000);
});
