// Computed columns under the access policy: a rollup counts only the rows the principal may see, a
// lookup finds only rows it may see, and a computed column that reads a hidden column is hidden too.
import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  isForbiddenError,
  type AccessPolicy,
  type Entity,
  type Principal,
} from '../../src/index.js';

const customers: Entity = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'owner', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'crm', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};
const orders: Entity = {
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'seller', type: 'STRING' },
    { name: 'amount', type: 'NUMBER' },
    { name: 'margin', type: 'NUMBER' },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'crm', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

const policy: AccessPolicy = {
  roles: {
    sales: { grants: ['entity.read:customers', 'entity.read:orders'] },
    guest: { grants: ['entity.read:customers'] },
  },
  rows: [
    {
      entity: 'orders',
      roles: ['sales'],
      filters: [{ column: 'seller', operator: 'EQUALS', value: '{{user.id}}' }],
    },
    {
      entity: 'customers',
      roles: ['sales'],
      filters: [{ column: 'owner', operator: 'EQUALS', value: '{{user.id}}' }],
    },
  ],
  columns: [{ entity: 'orders', roles: ['sales'], hidden: ['margin'] }],
};

const alice: Principal = { id: 'alice', kind: 'user', roles: ['sales'] };
const bob: Principal = { id: 'bob', kind: 'user', roles: ['sales'] };
const guest: Principal = { id: 'gus', kind: 'user', roles: ['guest'] };

async function openEngine() {
  const sheets = new MemorySpreadsheets({
    crm: {
      customers: [
        ['id', 'name', 'owner'],
        [1, 'Ada', 'alice'],
        [2, 'Grace', 'bob'],
      ],
      orders: [
        ['order_id', 'customer_id', 'seller', 'amount', 'margin'],
        [10, 1, 'alice', 100, 10],
        [11, 1, 'bob', 50, 5],
        [12, 2, 'bob', 70, 7],
        [13, 2, 'alice', 30, 3],
      ],
    },
  });
  const engine = new Engine({ spreadsheets: sheets, access: policy });
  await engine.catalog.registerEntity(customers);
  await engine.catalog.registerEntity(orders);
  await engine.catalog.createRelationship({
    name: 'orders_customer',
    relationship_type: 'foreign_key',
    source_entity: 'orders',
    target_entity: 'customers',
    foreign_key_config: {
      source_columns: ['customer_id'],
      target_columns: ['id'],
      enforce_foreign_key: true,
    },
  });
  await engine.catalog.putEntity({
    ...customers,
    columns: [
      ...customers.columns,
      { name: 'orders', type: 'NUMBER', rollup: { relationship: 'orders_customer', function: 'count' } },
      {
        name: 'total',
        type: 'NUMBER',
        rollup: { relationship: 'orders_customer', function: 'sum', column: 'amount' },
      },
      {
        name: 'margins',
        type: 'NUMBER',
        rollup: { relationship: 'orders_customer', function: 'sum', column: 'margin' },
      },
      { name: 'rich', type: 'BOOLEAN', formula: 'margins > 10' },
    ],
  });
  await engine.catalog.putEntity({
    ...orders,
    columns: [
      ...orders.columns,
      { name: 'customer', type: 'STRING', lookup: { relationship: 'orders_customer', column: 'name' } },
    ],
  });
  return engine;
}

async function rows(engine: Engine, principal: Principal | undefined, entity: string) {
  const catalog = principal ? engine.as(principal).catalog : engine.catalog;
  const out = await catalog.getEntity({ entity_name: entity, operation: {} });
  expect(out.body.error?.errors).toEqual([]);
  const { columns, rows: values } = out.body.table;
  return (values ?? []).map((row) => Object.fromEntries((columns ?? []).map((c, i) => [c.name, row[i]])));
}

describe('computed columns under the access policy', () => {
  it('the service sees every row counted', async () => {
    const engine = await openEngine();
    expect(await rows(engine, undefined, 'customers')).toEqual([
      { id: 1, name: 'Ada', owner: 'alice', orders: 2, total: 150, margins: 15, rich: true },
      { id: 2, name: 'Grace', owner: 'bob', orders: 2, total: 100, margins: 10, rich: false },
    ]);
  });

  it('a rollup counts only the rows the principal sees; one over a hidden column is hidden, and so is a formula of it', async () => {
    const engine = await openEngine();
    expect(await rows(engine, alice, 'customers')).toEqual([
      { id: 1, name: 'Ada', owner: 'alice', orders: 1, total: 100 },
    ]);
    expect(await rows(engine, bob, 'customers')).toEqual([
      { id: 2, name: 'Grace', owner: 'bob', orders: 1, total: 70 },
    ]);
    const error = await engine
      .as(alice)
      .catalog.getEntity({
        entity_name: 'customers',
        operation: { filters: [{ column: 'margins', operator: 'GREATER_THAN', value: 0 }] },
      })
      .catch((e: unknown) => e);
    expect(isForbiddenError(error)).toBe(true);
    expect(String(error)).toContain('"margins"');
  });

  it('a lookup finds only the rows the principal sees', async () => {
    const engine = await openEngine();
    // Alice sees her orders 10 (of her customer Ada) and 13 (of Grace, whom she does not see).
    expect((await rows(engine, alice, 'orders')).map((r) => [r['order_id'], r['customer']])).toEqual([
      [10, 'Ada'],
      [13, null],
    ]);
  });

  it('a principal that may not read the rows rolled up does not see the rollup', async () => {
    const engine = await openEngine();
    expect(await rows(engine, guest, 'customers')).toEqual([
      { id: 1, name: 'Ada', owner: 'alice' },
      { id: 2, name: 'Grace', owner: 'bob' },
    ]);
  });

  it('keeps what it computed per principal rules: reads after the first compute nothing', async () => {
    const engine = await openEngine();
    await rows(engine, alice, 'customers');
    await rows(engine, bob, 'customers');
    const before = engine.catalog.computations;
    await rows(engine, alice, 'customers');
    await rows(engine, bob, 'customers');
    await rows(engine, alice, 'orders');
    await rows(engine, alice, 'orders');
    expect(engine.catalog.computations - before).toBe(1);
  });
});
