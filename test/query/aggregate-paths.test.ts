// Aggregate reads on every path a read takes: the catalog in a principal's view (row rules narrow
// what is counted, hidden columns may not be grouped by or aggregated), the get_entity action of a
// workflow on openPostgres, the HTTP read endpoint, and rows kept in CSV files.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { createHandler } from '../../src/http/index.js';
import {
  Engine,
  MemorySpreadsheets,
  isForbiddenError,
  type GetEntityOutput,
  type Operation,
} from '../../src/index.js';
import { alice, customers, CUSTOMER_ROWS, finance, policy } from '../access/policy-example.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const BY_REGION: Operation = {
  group_by: ['region'],
  aggregates: [
    { function: 'count', alias: 'customers' },
    { function: 'max', column: 'name', alias: 'last_name' },
  ],
  order_by: [{ column: 'region', direction: 'ASC' }],
};

function tableOf(output: GetEntityOutput): { names: string[]; rows: unknown[][] } {
  expect(output.body.error?.errors).toEqual([]);
  return {
    names: (output.body.table.columns ?? []).map((c) => c.name),
    rows: output.body.table.rows ?? [],
  };
}

async function memoryEngine(withPolicy: boolean) {
  const sheets = new MemorySpreadsheets({ crm: { customers: CUSTOMER_ROWS.map((r) => [...r]) } });
  const engine = new Engine({ spreadsheets: sheets, ...(withPolicy ? { access: policy } : {}) });
  closing.push(() => engine.close());
  await engine.catalog.registerEntity(customers);
  return engine;
}

describe('aggregate reads under access control', () => {
  it('count and max see only the rows the rules let a principal see', async () => {
    const engine = await memoryEngine(true);
    // alice (sales) sees her customers 1 (Acme, north) and 3 (Initech, south).
    expect(
      tableOf(await engine.as(alice).catalog.getEntity({ entity_name: 'customers', operation: BY_REGION })),
    ).toEqual({
      names: ['region', 'customers', 'last_name'],
      rows: [
        ['north', 1, 'Acme'],
        ['south', 1, 'Initech'],
      ],
    });
    // Without a rule over the sum's rows: there is nothing for count to reveal.
    const all = await engine.as(finance).catalog.getEntity({
      entity_name: 'customers',
      operation: {
        ...BY_REGION,
        aggregates: [...BY_REGION.aggregates!, { function: 'sum', column: 'credit_limit', alias: 'credit' }],
      },
    });
    expect(tableOf(all).rows).toEqual([
      ['north', 2, 'Umbrella', 35000],
      ['south', 2, 'Initech', 12800],
    ]);
  });

  it('a hidden column may not be aggregated or grouped by, like selecting it: forbidden, naming the field', async () => {
    const engine = await memoryEngine(true);
    const view = engine.as(alice).catalog;
    for (const [operation, path] of [
      [
        { aggregates: [{ function: 'sum', column: 'credit_limit', alias: 'credit' }] },
        'operation.aggregates[0].column',
      ],
      [
        {
          group_by: ['region'],
          aggregates: [
            { function: 'count', alias: 'n' },
            { function: 'max', column: 'credit_limit', alias: 'top' },
          ],
        },
        'operation.aggregates[1].column',
      ],
      [
        { aggregates: [{ function: 'count', column: 'credit_limit', alias: 'known' }] },
        'operation.aggregates[0].column',
      ],
      [{ group_by: ['region', 'credit_limit'] }, 'operation.group_by[1]'],
    ] as const) {
      const error = await view
        .getEntity({ entity_name: 'customers', operation } as never)
        .catch((e: unknown) => e);
      expect(isForbiddenError(error)).toBe(true);
      expect((error as Error).message).toBe(
        `${path}: column "credit_limit" of entity "customers" is hidden from you`,
      );
    }
    // count of rows names no column: allowed, over her rows only.
    expect(
      tableOf(
        await view.getEntity({
          entity_name: 'customers',
          operation: { aggregates: [{ function: 'count', alias: 'n' }] },
        }),
      ).rows,
    ).toEqual([[2]]);
  });
});

describe('aggregate reads on every backend', () => {
  it('the get_entity action of a workflow on openPostgres groups and aggregates', async () => {
    const db = url ? await openPostgres(url, { schema: schemas.next() }) : await openPostgres();
    closing.push(() => db.close());
    const sheets = new MemorySpreadsheets({ crm: { customers: CUSTOMER_ROWS.map((r) => [...r]) } });
    const engine = new Engine({ storage: db.storage, spreadsheets: sheets });
    closing.push(() => engine.close());
    await engine.catalog.registerEntity(customers);
    await engine.workflows.create({
      name: 'by_region',
      steps: [
        {
          name: 'read',
          type: 'l2',
          l2_data: {
            provider: 'catalog',
            module: 'action',
            action: 'get_entity',
            metadata: {},
            input_data: {
              entity_name: 'customers',
              operation: {
                group_by: ['region'],
                aggregates: [
                  { function: 'avg', column: 'credit_limit', alias: 'mean' },
                  { function: 'min', column: 'credit_limit', alias: 'least' },
                ],
                order_by: [{ column: 'mean', direction: 'DESC' }],
              },
            },
          },
        },
      ],
      wires: [],
      workflow_output: { name: 'out', output_data: { rows: '{{read.body.table.rows}}' } },
    });
    const record = await engine.run('by_region', {});
    expect(record.error).toBeNull();
    expect(record.output).toEqual({
      rows: [
        ['north', 17500, 5000],
        ['south', 6400, 800],
      ],
    });
  }, 60_000);

  it('POST /catalog/entities/{name}/read takes group_by and aggregates, and answers a bad alias as a data error', async () => {
    const engine = await memoryEngine(false);
    const handler = createHandler(engine);
    const post = async (body: unknown) => {
      const answer = await handler(
        new Request('http://localhost/catalog/entities/customers/read', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      return { status: answer.status, json: (await answer.json()) as GetEntityOutput };
    };
    const good = await post({ operation: BY_REGION });
    expect(good.status).toBe(200);
    expect(tableOf(good.json).rows).toEqual([
      ['north', 2, 'Umbrella'],
      ['south', 2, 'Initech'],
    ]);
    const bad = await post({
      operation: { group_by: ['region'], aggregates: [{ function: 'count', alias: 'region' }] },
    });
    expect(bad.status).toBe(200);
    expect(bad.json.body.error?.errors).toEqual([
      'operation.aggregates[0].alias: alias "region" is the name of group column operation.group_by[0]; give the aggregate another alias',
    ]);
  });

  it('rows kept in a CSV file (FileSpreadsheets) aggregate as any others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stepwire-aggregate-'));
    closing.push(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'crm'));
    await writeFile(
      join(dir, 'crm', 'customers.csv'),
      CUSTOMER_ROWS.map((row) => row.map((cell) => String(cell)).join(',')).join('\n') + '\n',
    );
    const engine = new Engine({ spreadsheets: new FileSpreadsheets({ dir }) });
    closing.push(() => engine.close());
    await engine.catalog.registerEntity(customers);
    const output = await engine.catalog.getEntity({
      entity_name: 'customers',
      operation: {
        group_by: ['owner'],
        aggregates: [
          { function: 'count', alias: 'n' },
          { function: 'sum', column: 'credit_limit', alias: 'credit' },
        ],
        filters: [{ column: 'credit_limit', operator: 'GREATER_THAN', value: 1000 }],
      },
    });
    expect(tableOf(output).rows).toEqual([
      ['alice@example.com', 1, 5000],
      ['bob@example.com', 1, 12000],
      ['carol@example.com', 1, 30000],
    ]);
  });
});
