import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  UpstreamError,
  WriteRejectedError,
  type AppendRequest,
  type SpreadsheetAdapter,
  type UpdateRequest,
} from '../../src/index.js';

const customers = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
    { name: 'city', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

const orders = {
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'NUMBER' as const },
    { name: 'customer_id', type: 'NUMBER' as const },
    { name: 'amount', type: 'NUMBER' as const, number: { min: 0, step: 0.25 } },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

/** Stock per warehouse and item: a composite key, with a sheet that starts at C2. */
const stock = {
  name: 'stock',
  columns: [
    { name: 'warehouse', type: 'STRING' as const },
    { name: 'item', type: 'NUMBER' as const },
    { name: 'count', type: 'NUMBER' as const },
  ],
  primary_key: ['warehouse', 'item'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'stock', origin: { row: 1, col: 2 } },
};

function sheets(): MemorySpreadsheets {
  return new MemorySpreadsheets({
    shop: {
      // "note" is no column of the entity; the formula-looking text must survive every write.
      customers: [
        ['id', 'note', 'name', 'city'],
        [1, '=SUM(A1:A9)', 'Ada', 'London'],
        [2, 'keep me', 'Grace', 'Arlington'],
        [3, null, 'Linus', 'Helsinki'],
        [],
        ['footer', 'stays below'],
      ],
      orders: [
        ['order_id', 'customer_id', 'amount'],
        [10, 1, 25],
        [11, 1, 4.25],
        [12, 2, 80],
      ],
      stock: [
        [],
        ['x', 'y', 'warehouse', 'item', 'count'],
        ['left', 'alone', 'north', 1, 5],
        [null, null, 'north', 2, 0],
        [null, null, 'south', 1, 7],
      ],
    },
  });
}

async function setUp(spreadsheets: SpreadsheetAdapter = sheets()) {
  const engine = new Engine({ spreadsheets });
  await engine.catalog.registerEntity(customers);
  await engine.catalog.registerEntity(orders);
  await engine.catalog.registerEntity(stock);
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
  return engine;
}

async function rows(engine: Engine, entity: string) {
  return (await engine.catalog.getEntity({ entity_name: entity, operation: {} })).body.table.rows;
}

async function rejection(promise: Promise<unknown>): Promise<WriteRejectedError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(WriteRejectedError);
  return error as WriteRejectedError;
}

describe('upsert', () => {
  it('changes the given columns of existing keys in place and appends new keys', async () => {
    const memory = sheets();
    const engine = await setUp(memory);
    const result = await engine.catalog.upsert('customers', [
      { id: 2, city: 'Paris' },
      { id: 4, name: 'Barbara' },
    ]);
    expect(result).toEqual({ written: 2 });
    expect(memory.cells('shop', 'customers')).toEqual([
      ['id', 'note', 'name', 'city'],
      [1, '=SUM(A1:A9)', 'Ada', 'London'],
      [2, 'keep me', 'Grace', 'Paris'],
      [3, null, 'Linus', 'Helsinki'],
      [4, null, 'Barbara', null],
      [],
      ['footer', 'stays below'],
    ]);
  });

  it('writes a whole row given as an array, and clears a cell given as null', async () => {
    const engine = await setUp();
    await engine.catalog.upsert('customers', [[1, 'Ada Lovelace', null]]);
    expect((await rows(engine, 'customers'))![0]).toEqual([1, 'Ada Lovelace', null]);
  });

  it('checks enforced foreign keys of the rows it writes', async () => {
    const engine = await setUp();
    const error = await rejection(engine.catalog.upsert('orders', [{ order_id: 10, customer_id: 9 }]));
    // A conflict with what the customers sheet holds (409), as deleting a referenced customer is.
    expect(error.code).toBe('write_conflict');
    expect(error.message).toContain('matches no row of "customers"');
    expect((await rows(engine, 'orders'))![0]).toEqual([10, 1, 25]);
  });

  it('refuses a key given twice and a row without its key', async () => {
    const engine = await setUp();
    const error = await rejection(
      engine.catalog.upsert('customers', [{ id: 5, name: 'a' }, { id: 5, name: 'b' }, { name: 'no key' }]),
    );
    expect(error.issues.map((i) => i.code).sort()).toEqual(['duplicate_key', 'null_key']);
    expect(await rows(engine, 'customers')).toHaveLength(3);
  });
});

describe('update', () => {
  it('needs every key to exist: one missing key is a conflict and nothing is written', async () => {
    const memory = sheets();
    const engine = await setUp(memory);
    const before = memory.cells('shop', 'customers');
    const error = await rejection(
      engine.catalog.update('customers', [
        { id: 1, city: 'Oxford' },
        { id: 9, city: 'Nowhere' },
      ]),
    );
    expect(error.code).toBe('write_conflict');
    expect(error.issues).toEqual([
      {
        code: 'missing_key',
        path: 'customers[1]',
        message: 'row 2 of "customers" names primary key (id=9), which no row of "customers" holds',
      },
    ]);
    expect(memory.cells('shop', 'customers')).toEqual(before);
  });

  it('keeps the column rules of the entity: number min and step', async () => {
    const engine = await setUp();
    const error = await rejection(engine.catalog.update('orders', [{ order_id: 10, amount: 3.1 }]));
    expect(error.code).toBe('write_rejected');
    expect(error.issues[0]).toMatchObject({ code: 'invalid_step', path: 'orders[0].amount' });
    await engine.catalog.update('orders', [{ order_id: 10, amount: 3.25 }]);
    expect((await rows(engine, 'orders'))![0]).toEqual([10, 1, 3.25]);
  });

  it('finds rows by a composite key in a table that starts at C2, writing only its cells', async () => {
    const memory = sheets();
    const engine = await setUp(memory);
    await engine.catalog.update('stock', [{ warehouse: 'north', item: 1, count: 4 }]);
    expect(memory.cells('shop', 'stock')![2]).toEqual(['left', 'alone', 'north', 1, 4]);
    await rejection(engine.catalog.update('stock', [{ warehouse: 'south', item: 2, count: 1 }]));
  });

  it('refuses a key the sheet holds twice, naming both rows', async () => {
    const memory = sheets();
    memory.setSheet('shop', 'orders', [
      ['order_id', 'customer_id', 'amount'],
      [10, 1, 25],
      [10, 2, 30],
    ]);
    const engine = await setUp(memory);
    const error = await rejection(engine.catalog.update('orders', [{ order_id: 10, amount: 1 }]));
    expect(error.issues[0]!.message).toContain('rows 2 and 3 of sheet "orders"');
  });
});

describe('delete', () => {
  it('removes the rows of the keys; the rows below move up', async () => {
    const memory = sheets();
    const engine = await setUp(memory);
    expect(await engine.catalog.delete('stock', [{ warehouse: 'north', item: 2 }])).toEqual({ written: 1 });
    expect(memory.cells('shop', 'stock')).toEqual([
      [],
      ['x', 'y', 'warehouse', 'item', 'count'],
      ['left', 'alone', 'north', 1, 5],
      [null, null, 'south', 1, 7],
    ]);
  });

  it('refuses to delete a row an enforced foreign key references, naming the referencing entity and key', async () => {
    const engine = await setUp();
    const error = await rejection(engine.catalog.delete('customers', [{ id: 3 }, { id: 1 }]));
    expect(error.code).toBe('write_conflict');
    expect(error.issues).toEqual([
      {
        code: 'referenced',
        path: 'customers[1]',
        message:
          'row 2 of "customers" (id=1) cannot be deleted: "orders" (order_id=10) references it on (id) (relationship "orders_customer"); change or delete that row first',
      },
    ]);
    expect(await rows(engine, 'customers')).toHaveLength(3);
  });

  it('deletes a target together with the rows that reference it', async () => {
    const engine = await setUp();
    await engine.catalog.write([
      { entity: 'orders', rows: [{ order_id: 12 }], mode: 'delete' },
      { entity: 'customers', rows: [{ id: 2 }], mode: 'delete' },
    ]);
    expect((await rows(engine, 'customers'))!.map((r) => r[0])).toEqual([1, 3]);
  });

  it('refuses a missing key; a whole row read back serves as a key', async () => {
    const engine = await setUp();
    expect((await rejection(engine.catalog.delete('orders', [{ order_id: 99 }]))).code).toBe(
      'write_conflict',
    );
    const [row] = (await engine.catalog.getEntity({ entity_name: 'orders', operation: {} })).body.table.rows!;
    await engine.catalog.delete('orders', [{ order_id: row![0], customer_id: row![1], amount: row![2] }]);
    expect(await rows(engine, 'orders')).toHaveLength(2);
  });
});

describe('one write to several parts', () => {
  it('may append to an entity twice, but not write it twice by key', async () => {
    const engine = await setUp();
    const error = await rejection(
      engine.catalog.write([
        { entity: 'customers', rows: [{ id: 1, city: 'Oxford' }], mode: 'update' },
        { entity: 'customers', rows: [{ id: 1 }], mode: 'delete' },
      ]),
    );
    expect(error.issues).toEqual([
      {
        code: 'repeated_entity',
        path: 'customers',
        message: '"customers" is written twice in one write; only appends may repeat an entity',
      },
    ]);
    await engine.catalog.write([
      { entity: 'customers', rows: [{ id: 7, name: 'G' }] },
      { entity: 'customers', rows: [{ id: 8, name: 'H' }] },
    ]);
    expect((await rows(engine, 'customers'))!.map((r) => r[0])).toEqual([1, 2, 3, 7, 8]);
  });
});

describe('writes by key and other writers', () => {
  it('plans again when another writer moved the rows between the check and the write', async () => {
    const memory = sheets();
    let moved = false;
    const adapter: SpreadsheetAdapter = {
      read: (ranges) => memory.read(ranges),
      append: (request: AppendRequest) => memory.append(request),
      write: (request) => memory.write(request),
      update: (request: UpdateRequest) => {
        if (!moved) {
          // Someone inserts a customer above the rows just before our write lands.
          moved = true;
          memory.append({
            spreadsheet_id: 'shop',
            sheet_name: 'customers',
            row: 1,
            col: 0,
            values: [[0, null, 'Zero']],
          });
        }
        memory.update(request);
      },
    };
    const engine = await setUp(adapter);
    await engine.catalog.update('customers', [{ id: 2, city: 'Paris' }]);
    expect(
      memory
        .cells('shop', 'customers')!
        .slice(1, 5)
        .map((r) => [r[0], r[3]]),
    ).toEqual([
      [0, undefined],
      [1, 'London'],
      [2, 'Paris'],
      [3, 'Helsinki'],
    ]);
  });

  it('takes back a delete when a later entity of the same write fails', async () => {
    const memory = sheets();
    const before = memory.cells('shop', 'stock');
    const adapter: SpreadsheetAdapter = {
      read: (ranges) => memory.read(ranges),
      append: (request: AppendRequest) => {
        if (request.sheet_name === 'orders') throw new UpstreamError('the service lost the append', 503);
        memory.append(request);
      },
      write: (request) => memory.write(request),
      update: (request) => memory.update(request),
    };
    const engine = await setUp(adapter);
    const error = await engine.catalog
      .write([
        { entity: 'stock', rows: [{ warehouse: 'north', item: 1 }], mode: 'delete' },
        { entity: 'orders', rows: [{ order_id: 13, customer_id: 1, amount: 1 }] },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(memory.cells('shop', 'stock')).toEqual(before);
  });
});
