import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, ValidationError, type Entity } from '../../src/index.js';

type Customer = { id: number; name: string; discount: number | null };
type Order = { order_id: number; customer_id: number | null; amount: number | null; qty: number | null };

const customers: Entity = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'discount', type: 'NUMBER' },
    { name: 'orders', type: 'NUMBER', rollup: { relationship: 'orders_customer', function: 'count' } },
    // A rollup of a formula.
    {
      name: 'total',
      type: 'NUMBER',
      rollup: { relationship: 'orders_customer', function: 'sum', column: 'line' },
    },
    {
      name: 'average',
      type: 'NUMBER',
      rollup: { relationship: 'orders_customer', function: 'avg', column: 'line' },
    },
    {
      name: 'biggest',
      type: 'NUMBER',
      rollup: { relationship: 'orders_customer', function: 'max', column: 'amount' },
    },
    {
      name: 'smallest',
      type: 'NUMBER',
      rollup: { relationship: 'orders_customer', function: 'min', column: 'amount' },
    },
    {
      name: 'big_orders',
      type: 'NUMBER',
      rollup: {
        relationship: 'orders_customer',
        function: 'count',
        filters: [{ column: 'amount', operator: 'GREATER_THAN', value: 10 }],
      },
    },
    { name: 'label', type: 'STRING', formula: 'upper(name) + " (" + string(int(orders)) + ")"' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 's', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

const orders: Entity = {
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'amount', type: 'NUMBER' },
    { name: 'qty', type: 'NUMBER' },
    { name: 'line', type: 'NUMBER', formula: 'amount * qty' },
    { name: 'discount', type: 'NUMBER', lookup: { relationship: 'orders_customer', column: 'discount' } },
    // A formula of a lookup.
    { name: 'net', type: 'NUMBER', formula: 'line * (1.0 - discount)' },
    // A lookup of a rollup.
    { name: 'customer_total', type: 'NUMBER', lookup: { relationship: 'orders_customer', column: 'total' } },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 's', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

async function shop(cs: readonly Customer[], os: readonly Order[]) {
  const sheets = new MemorySpreadsheets({
    s: {
      customers: [['id', 'name', 'discount'], ...cs.map((c) => [c.id, c.name, c.discount])],
      orders: [
        ['order_id', 'customer_id', 'amount', 'qty'],
        ...os.map((o) => [o.order_id, o.customer_id, o.amount, o.qty]),
      ],
    },
  });
  const engine = new Engine({ spreadsheets: sheets });
  const stored = (e: Entity): Entity => ({
    ...e,
    columns: e.columns.filter((c) => !c.formula && !c.lookup && !c.rollup),
  });
  await engine.catalog.registerEntity(stored(customers));
  await engine.catalog.registerEntity(stored(orders));
  await engine.catalog.createRelationship({
    name: 'orders_customer',
    relationship_type: 'foreign_key',
    source_entity: 'orders',
    target_entity: 'customers',
    foreign_key_config: {
      source_columns: ['customer_id'],
      target_columns: ['id'],
      enforce_foreign_key: false,
    },
  });
  // orders.customer_total reads customers.total, which reads orders.line: one after the other.
  await engine.catalog.putEntity({
    ...orders,
    columns: orders.columns.filter((c) => c.name !== 'customer_total'),
  });
  await engine.catalog.putEntity(customers);
  await engine.catalog.putEntity(orders);
  return engine;
}

/** The same columns, computed in plain JavaScript. */
function oracle(cs: readonly Customer[], os: readonly Order[]) {
  const mul = (a: number | null, b: number | null) => (a === null || b === null ? null : a * b);
  const lines = os.map((o) => mul(o.amount, o.qty));
  const byId = new Map<number, Customer>();
  for (const c of cs) if (!byId.has(c.id)) byId.set(c.id, c);
  const customerRows = cs.map((c) => {
    const mine = os.flatMap((o, i) => (o.customer_id === c.id ? [{ o, line: lines[i]! }] : []));
    const ls = mine.map((m) => m.line).filter((x): x is number => x !== null);
    const amounts = mine.map((m) => m.o.amount).filter((x): x is number => x !== null);
    const total = ls.reduce((a, b) => a + b, 0);
    return [
      c.id,
      c.name,
      c.discount,
      mine.length,
      total,
      ls.length > 0 ? total / ls.length : null,
      amounts.length > 0 ? amounts.reduce((a, b) => (b > a ? b : a)) : null,
      amounts.length > 0 ? amounts.reduce((a, b) => (b < a ? b : a)) : null,
      amounts.filter((a) => a > 10).length,
      `${c.name.toUpperCase()} (${mine.length})`,
    ];
  });
  const totals = new Map(customerRows.map((r) => [r[0] as number, r[4] as number]));
  const orderRows = os.map((o, i) => {
    const c = o.customer_id === null ? undefined : byId.get(o.customer_id);
    const discount = c ? c.discount : null;
    const line = lines[i]!;
    return [
      o.order_id,
      o.customer_id,
      o.amount,
      o.qty,
      line,
      discount,
      line === null || discount === null ? null : line * (1 - discount),
      c ? totals.get(c.id)! : null,
    ];
  });
  return { customerRows, orderRows };
}

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 });
const data = fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { minLength: 0, maxLength: 12 }).chain((ids) =>
  fc.tuple(
    fc.tuple(
      ...ids.map((id) =>
        fc.record({
          id: fc.constant(id),
          name: fc.constantFrom('ada', 'grace', 'linus', 'émile'),
          discount: maybe(fc.constantFrom(0, 0.1, 0.25, 0.5)),
        }),
      ),
    ),
    fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }), { maxLength: 40 }).chain((orderIds) =>
      fc.tuple(
        ...orderIds.map((order_id) =>
          fc.record({
            order_id: fc.constant(order_id),
            customer_id: maybe(fc.integer({ min: 1, max: 32 })),
            amount: maybe(fc.integer({ min: -50, max: 200 }).map((x) => x / 4)),
            qty: maybe(fc.integer({ min: 0, max: 9 })),
          }),
        ),
      ),
    ),
  ),
);

describe('computed columns against a plain JavaScript oracle', () => {
  it('reads every computed column as the oracle computes it, on random rows', async () => {
    await fc.assert(
      fc.asyncProperty(data, async ([cs, os]) => {
        const engine = await shop(cs, os);
        const expected = oracle(cs, os);
        const c = await engine.catalog.getEntity({
          entity_name: 'customers',
          operation: {},
          page_size: 1000,
        });
        expect(c.body.error?.errors).toEqual([]);
        expect(c.body.table.rows).toEqual(expected.customerRows);
        const o = await engine.catalog.getEntity({ entity_name: 'orders', operation: {}, page_size: 1000 });
        expect(o.body.table.rows).toEqual(expected.orderRows);
      }),
      { numRuns: 40 },
    );
  });

  it('sorts and filters by a lookup of a rollup, nulls last, as the oracle does', async () => {
    await fc.assert(
      fc.asyncProperty(data, async ([cs, os]) => {
        const engine = await shop(cs, os);
        const { orderRows } = oracle(cs, os);
        const out = await engine.catalog.getEntity({
          entity_name: 'orders',
          operation: {
            select_columns: [{ column: 'order_id' }, { column: 'customer_total' }],
            filters: [{ column: 'net', operator: 'IS_NOT_NULL' }],
            order_by: [
              { column: 'customer_total', direction: 'DESC' },
              { column: 'order_id', direction: 'ASC' },
            ],
          },
          page_size: 1000,
        });
        const want = orderRows
          .filter((r) => r[6] !== null)
          .map((r): [number, number | null] => [r[0] as number, r[7] as number | null])
          .sort(([ia, a], [ib, b]) => (a === b ? ia - ib : a === null ? 1 : b === null ? -1 : b - a));
        expect(out.body.table.rows).toEqual(want);
      }),
      { numRuns: 30 },
    );
  });
});

describe('hostile expressions', () => {
  const base: Entity = {
    name: 't',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'name', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 's', sheet_name: 't', origin: { row: 0, col: 0 } },
  };
  const withFormula = (formula: string, type: 'NUMBER' | 'STRING' | 'BOOLEAN' = 'STRING'): Entity => ({
    ...base,
    columns: [...base.columns, { name: 'f', type, formula }],
  });

  it('refuses them at registration with a validation error, never a crash or a hang', async () => {
    const engine = new Engine();
    const hostile = [
      '[1, 2, 3].map(x, [1, 2, 3].map(y, [1, 2, 3].map(z, x * y * z)))',
      '[1, 2].exists(x, x > 1) ? name : name',
      'name.matches("(a+)+$") ? name : name',
      'has(name.x) ? name : name',
      'cel.bind(x, name + name, x + x)',
      '{"a": name}.a',
      'process',
      'globalThis.name',
      'constructor',
      'name.constructor',
      '"a" * 1000000',
      '('.repeat(200) + 'name' + ')'.repeat(200),
      Array.from({ length: 300 }, () => 'name').join(' + '),
      'x'.repeat(2001),
      'timestamp("2020-01-01T00:00:00Z")',
    ];
    for (const formula of hostile) {
      const started = performance.now();
      const error = await engine.catalog.registerEntity(withFormula(formula)).catch((e: unknown) => e);
      expect(error, formula.slice(0, 60)).toBeInstanceOf(ValidationError);
      expect(performance.now() - started).toBeLessThan(1000);
    }
    expect(await engine.catalog.listEntities()).toEqual([]);
  });

  it('gives an empty cell where evaluation fails, and never a text past 50,000 characters', async () => {
    const sheets = new MemorySpreadsheets({
      s: {
        t: [
          ['id', 'name'],
          [1, 'x'.repeat(30_000)],
          [0, 'y'],
          [2, null],
        ],
      },
    });
    const engine = new Engine({ spreadsheets: sheets });
    await engine.catalog.registerEntity({
      ...base,
      columns: [
        ...base.columns,
        { name: 'twice', type: 'STRING', formula: 'name + name' },
        { name: 'ratio', type: 'NUMBER', formula: '10.0 / id' },
        { name: 'huge', type: 'NUMBER', formula: 'int(id) * 9223372036854775807 + 1' },
        { name: 'known', type: 'BOOLEAN', formula: 'id > 1.0 || size(name) > 2' },
      ],
    });
    const out = await engine.catalog.getEntity({
      entity_name: 't',
      operation: {
        select_columns: [
          { column: 'id' },
          { column: 'twice' },
          { column: 'ratio' },
          { column: 'huge' },
          { column: 'known' },
        ],
      },
    });
    expect(out.body.error?.errors).toEqual([]);
    expect(out.body.table.rows).toEqual([
      [1, null, 10, null, true],
      [0, 'yy', null, 1, false],
      [2, null, 5, null, true],
    ]);
  });
});
