import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  Engine,
  MemorySpreadsheets,
  NotFoundError,
  ValidationError,
  WriteRejectedError,
} from '../../src/index.js';
import { customersEntity, ordersCustomerFk, ordersEntity, shopSheets } from '../fixtures.js';
import { shopEngine } from '../engine/helpers.js';

describe('catalog registration', () => {
  it('registers an entity and refuses a second one of the same name', async () => {
    const engine = new Engine();
    await expect(engine.catalog.registerEntity(customersEntity)).resolves.toEqual(customersEntity);
    await expect(engine.catalog.registerEntity(customersEntity)).rejects.toBeInstanceOf(ConflictError);
    expect((await engine.catalog.listEntities()).map((e) => e.name)).toEqual(['customers']);
  });

  it('upserts: creates, then replaces the definition', async () => {
    const engine = new Engine();
    expect((await engine.catalog.upsertEntity(customersEntity)).created).toBe(true);
    const changed = { ...customersEntity, description: 'changed' };
    expect(await engine.catalog.upsertEntity(changed)).toEqual({ entity: changed, created: false });
    expect((await engine.catalog.getDefinition('customers')).description).toBe('changed');
  });

  it('refuses to replace an entity in a way that breaks a relationship', async () => {
    const { engine } = await shopEngine();
    const retyped = {
      ...ordersEntity,
      columns: ordersEntity.columns.map((c) =>
        c.name === 'customer_id' ? { ...c, type: 'STRING' as const } : c,
      ),
    };
    const error = (await engine.catalog.upsertEntity(retyped).catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toContain('orders_customer');
    expect(error.message).toContain('changes from NUMBER to STRING');
    const removed = {
      ...ordersEntity,
      columns: ordersEntity.columns.filter((c) => c.name !== 'customer_id'),
    };
    await expect(engine.catalog.upsertEntity(removed)).rejects.toThrow(/removes/);
    expect((await engine.catalog.getDefinition('orders')).columns).toEqual(ordersEntity.columns);
  });

  it('rejects an invalid entity with every problem and its path', async () => {
    const engine = new Engine();
    const error = await engine.catalog
      .registerEntity({
        ...customersEntity,
        primary_key: ['nope'],
        columns: [...customersEntity.columns, { name: 'id', type: 'NUMBER' }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const paths = (error as ValidationError).issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['columns[3].name', 'primary_key[0]']));
  });

  it('checks relationships: entities, columns, types, duplicates', async () => {
    const engine = new Engine();
    await expect(engine.catalog.createRelationship(ordersCustomerFk)).rejects.toBeInstanceOf(NotFoundError);
    await engine.catalog.registerEntity(customersEntity);
    await engine.catalog.registerEntity(ordersEntity);
    const bad = (await engine.catalog
      .createRelationship({
        ...ordersCustomerFk,
        foreign_key_config: { source_columns: ['item'], target_columns: ['id'], enforce_foreign_key: false },
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(bad.issues[0]).toMatchObject({
      path: 'foreign_key_config.target_columns[0]',
      code: 'incompatible_types',
    });
    const unknown = (await engine.catalog
      .createRelationship({
        ...ordersCustomerFk,
        foreign_key_config: { source_columns: ['cust'], target_columns: ['id'], enforce_foreign_key: false },
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(unknown.issues[0]).toMatchObject({
      path: 'foreign_key_config.source_columns[0]',
      code: 'unknown_column',
    });
    await engine.catalog.createRelationship(ordersCustomerFk);
    await expect(engine.catalog.createRelationship(ordersCustomerFk)).rejects.toBeInstanceOf(ConflictError);
  });
});

describe('catalog reads', () => {
  it('reads an entity from a sheet with an origin', async () => {
    const { engine } = await shopEngine();
    const out = await engine.catalog.getEntity({
      entity_name: 'orders',
      operation: {
        filters: [{ column: 'customer_id', operator: 'EQUALS', value_type: 'NUMBER', value: '1' }],
      },
    });
    expect(out.body.error?.is_error).toBe(false);
    expect(out.body.table.rows).toEqual([
      [10, 1, 'Lamp', 25],
      [11, 1, 'Desk', 150.5],
    ]);
    expect(out.body.table.columns?.map((c) => c.name)).toEqual(['order_id', 'customer_id', 'item', 'amount']);
  });

  it('reports bad input and unknown entities in body.error, never throwing', async () => {
    const { engine } = await shopEngine();
    const unknown = await engine.catalog.getEntity({ entity_name: 'nope', operation: {} });
    expect(unknown.body).toMatchObject({ table: { columns: null, rows: null }, error: { is_error: true } });
    expect(unknown.body.error?.errors?.[0]).toContain('nope');
    // As a caller without types would send it.
    const extra = await engine.catalog.getEntity({ entity_name: 'orders', operation: {}, extra: 1 } as never);
    expect(extra.body.error?.is_error).toBe(true);
    expect(extra.body.error?.errors?.join(' ')).toContain('extra');
  });

  it('sees rows changed in the sheet since the last read', async () => {
    const spreadsheets = new MemorySpreadsheets(shopSheets());
    const engine = new Engine({ spreadsheets });
    await engine.catalog.registerEntity(customersEntity);
    expect(
      (await engine.catalog.getEntity({ entity_name: 'customers', operation: {} })).body.table.rows,
    ).toHaveLength(3);
    spreadsheets.setSheet('shop', 'customers', [
      ['id', 'name', 'city'],
      [9, 'Zed', null],
    ]);
    expect(
      (await engine.catalog.getEntity({ entity_name: 'customers', operation: {} })).body.table.rows,
    ).toEqual([[9, 'Zed', null]]);
  });

  it('names the A1 cell of a value that is not of its column type', async () => {
    const sheets = shopSheets();
    sheets['shop']!['orders']![3]![4] = 'lots';
    const engine = new Engine({ spreadsheets: new MemorySpreadsheets(sheets) });
    await engine.catalog.registerEntity(ordersEntity);
    const out = await engine.catalog.getEntity({ entity_name: 'orders', operation: {} });
    expect(out.body.error?.is_error).toBe(true);
    expect(out.body.error?.errors?.join(' ')).toContain('E4');
  });
});

describe('catalog appends', () => {
  it('appends rows after the last data row, in header order, keeping other columns empty', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await engine.catalog.append('orders', [{ order_id: 14, customer_id: 2, item: 'Mug', amount: 7 }]);
    const cells = spreadsheets.cells('shop', 'orders')!;
    expect(cells[6]).toEqual([null, 14, 2, 'Mug', 7, null]);
    const out = await engine.catalog.getEntity({
      entity_name: 'orders',
      operation: { order_by: [{ column: 'order_id', direction: 'DESC' }] },
      page_size: 1,
    });
    expect(out.body.table.rows).toEqual([[14, 2, 'Mug', 7]]);
  });

  it('is all or nothing: a bad row, a duplicate key or a missing foreign key writes nothing', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'orders');
    const error = (await engine.catalog
      .append('orders', [
        { order_id: 20, customer_id: 1, item: 'ok', amount: 1 },
        { order_id: 10, customer_id: 1, item: 'dup', amount: 1 },
        { order_id: 21, customer_id: 99, item: 'orphan', amount: 1 },
        { order_id: 22, customer_id: 1, item: 'bad', amount: 'many' },
        { order_id: 20, customer_id: 2, item: 'dup in batch', amount: 3 },
      ])
      .catch((e: unknown) => e)) as WriteRejectedError;
    expect(error).toBeInstanceOf(WriteRejectedError);
    const codes = error.issues.map((i) => i.code).sort();
    expect(codes).toEqual(['duplicate_key', 'duplicate_key', 'foreign_key', 'invalid_type']);
    expect(error.message).toContain('customer_id=99');
    expect(error.message).toContain('row 3');
    expect(spreadsheets.cells('shop', 'orders')).toEqual(before);
  });

  it('refuses an empty row, which would end the table', async () => {
    const { engine } = await shopEngine();
    await expect(engine.catalog.append('customers', [{}])).rejects.toThrow(/empty/);
  });

  it('serializes concurrent appends to one sheet so neither is lost', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await Promise.all([
      engine.catalog.append('customers', [{ id: 4, name: 'A' }]),
      engine.catalog.append('customers', [{ id: 5, name: 'B' }]),
      engine.catalog.append('customers', [{ id: 6, name: 'C' }]),
    ]);
    const ids = spreadsheets
      .cells('shop', 'customers')!
      .slice(1)
      .map((r) => r[0]);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('writes several entities at once, checking foreign keys against rows written together', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await engine.catalog.write([
      { entity: 'orders', rows: [{ order_id: 30, customer_id: 7, item: 'Book', amount: 12 }] },
      { entity: 'customers', rows: [{ id: 7, name: 'New', city: 'Oslo' }] },
    ]);
    expect(spreadsheets.cells('shop', 'customers')!.at(-1)).toEqual([7, 'New', 'Oslo']);
    expect(spreadsheets.cells('shop', 'orders')!.at(-1)).toEqual([null, 30, 7, 'Book', 12, null]);
  });
});
