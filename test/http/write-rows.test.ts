import { describe, expect, it } from 'vitest';
import { createClient, createHandler, HttpProblemError } from '../../src/http/index.js';
import { Engine, MemorySpreadsheets } from '../../src/index.js';
import { shopEngine } from '../engine/helpers.js';
import { customersEntity, ordersCustomerFk, ordersEntity, shopSheets } from '../fixtures.js';
import { call, expectDocumented } from './helpers.js';

describe('POST /catalog/entities/{name}/rows', () => {
  it('upserts by key: 200 with the number of rows written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const handler = createHandler(engine);
    const res = await call(handler, 'POST', '/catalog/entities/customers/rows', {
      write_mode: 'upsert',
      rows: [
        { id: 2, city: 'Arlington' },
        { id: 4, name: 'Barbara', city: 'Boston' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ written: 2 });
    expectDocumented('catalog.writeRows', 200, res.response, res.body);
    expect(spreadsheets.cells('shop', 'customers')!.slice(2)).toEqual([
      [2, 'Grace', 'Arlington'],
      [3, 'Linus', 'Helsinki'],
      [4, 'Barbara', 'Boston'],
    ]);
  });

  it('appends by default and takes a data table', async () => {
    const { engine } = await shopEngine();
    const res = await call(createHandler(engine), 'POST', '/catalog/entities/customers/rows', {
      rows: { columns: [{ name: 'id' }, { name: 'name' }], rows: [[5, 'Edsger']] },
    });
    expect(res.body).toEqual({ written: 1 });
    const read = await engine.catalog.getEntity({
      entity_name: 'customers',
      operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 5 }] },
    });
    expect(read.body.table.rows).toEqual([[5, 'Edsger', null]]);
  });

  it('answers 409 for a missing key and for a row an enforced foreign key references', async () => {
    const { engine } = await shopEngine();
    const handler = createHandler(engine);
    const missing = await call(handler, 'POST', '/catalog/entities/customers/rows', {
      write_mode: 'update',
      rows: [{ id: 9, city: 'Nowhere' }],
    });
    expect(missing.status).toBe(409);
    expect(missing.body).toMatchObject({
      code: 'write_conflict',
      errors: [{ code: 'missing_key', path: 'customers[0]' }],
    });
    expectDocumented('catalog.writeRows', 409, missing.response, missing.body);
    const referenced = await call(handler, 'POST', '/catalog/entities/customers/rows', {
      write_mode: 'delete',
      rows: [{ id: 3 }],
    });
    expect(referenced.status).toBe(409);
    expect(referenced.body.errors[0].message).toContain('"orders" (order_id=13) references it');
  });

  it('answers 400 for bad rows and for a bad body, and 404 for an unknown entity', async () => {
    const { engine } = await shopEngine();
    const handler = createHandler(engine);
    const bad = await call(handler, 'POST', '/catalog/entities/customers/rows', {
      write_mode: 'upsert',
      rows: [{ id: 'seven', colour: 'red' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('write_rejected');
    expect(bad.body.errors[0].message).toContain('"colour", not a column of the entity');
    const shape = await call(handler, 'POST', '/catalog/entities/customers/rows', {
      write_mode: 'merge',
      rows: [],
    });
    expect(shape.status).toBe(400);
    expect(shape.body.errors[0].path).toBe('write_mode');
    const unknown = await call(handler, 'POST', '/catalog/entities/nope/rows', { rows: [] });
    expect(unknown.status).toBe(404);
  });

  it('answers 400 naming an unknown property of the body, and writes nothing', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'orders');
    const res = await call(createHandler(engine), 'POST', '/catalog/entities/orders/rows', {
      write_mod: 'delete',
      rows: [{ order_id: 10 }],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([
      expect.objectContaining({ code: 'unknown_property', message: expect.stringContaining('"write_mod"') }),
    ]);
    expectDocumented('catalog.writeRows', 400, res.response, res.body);
    expect(spreadsheets.cells('shop', 'orders')).toEqual(before);
  });

  it('answers 400 naming the column a data table gives twice; nothing is written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'customers');
    const res = await call(createHandler(engine), 'POST', '/catalog/entities/customers/rows', {
      rows: { columns: ['id', 'id'], rows: [[8, 9]] },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'write_rejected',
      errors: [{ code: 'repeated_column', path: 'rows.columns[1]' }],
    });
    expect(res.body.errors[0].message).toContain('"id"');
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });

  it('is one method of the typed client', async () => {
    const { engine } = await shopEngine();
    const handler = createHandler(engine);
    const client = createClient({
      baseUrl: 'http://stepwire.test',
      retry: 0,
      fetch: async (input, init) => handler(new Request(input, init)),
    });
    expect(
      await client.writeRows('orders', { write_mode: 'delete', rows: [{ order_id: 10 }, { order_id: 11 }] }),
    ).toEqual({
      written: 2,
    });
    const error = await client
      .writeRows('orders', { write_mode: 'delete', rows: [{ order_id: 10 }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpProblemError);
    expect((error as HttpProblemError).status).toBe(409);
  });

  it('answers 409 naming the sheet when the entity has no sheet, as /read reports it', async () => {
    const { engine } = await shopEngine();
    await engine.catalog.registerEntity({
      ...customersEntity,
      name: 'ghosts',
      spreadsheet_config: { ...customersEntity.spreadsheet_config, sheet_name: 'ghosts' },
    });
    const handler = createHandler(engine);
    const res = await call(handler, 'POST', '/catalog/entities/ghosts/rows', { rows: [{ id: 1 }] });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'sheet_not_found', title: 'Conflict' });
    expect(res.body.detail).toContain('sheet "ghosts" does not exist');
    expectDocumented('catalog.writeRows', 409, res.response, res.body);
    const read = await call(handler, 'POST', '/catalog/entities/ghosts/read', {});
    expect(read.body.body.error.errors).toEqual([res.body.detail]);
  });

  it.each(['append', 'upsert'])(
    'answers 409 naming the A1 cell when the sheet holds a cell of the wrong type (%s)',
    async (write_mode) => {
      const sheets = shopSheets();
      sheets.shop!.customers![2] = ['two', 'Grace', 'New York'];
      const engine = new Engine({ spreadsheets: new MemorySpreadsheets(sheets) });
      await engine.catalog.registerEntity(customersEntity);
      const res = await call(createHandler(engine), 'POST', '/catalog/entities/customers/rows', {
        write_mode,
        rows: [{ id: 9, name: 'Edsger' }],
      });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('invalid_cell');
      expect(res.body.detail).toContain('Cell customers!A3 of entity "customers" holds "two"');
      expectDocumented('catalog.writeRows', 409, res.response, res.body);
    },
  );

  it('answers 409 naming the sheet when a referencing entity of an enforced foreign key has no sheet', async () => {
    const sheets = shopSheets();
    delete sheets.shop!.orders;
    const engine = new Engine({ spreadsheets: new MemorySpreadsheets(sheets) });
    await engine.catalog.registerEntity(customersEntity);
    await engine.catalog.registerEntity(ordersEntity);
    await engine.catalog.createRelationship(ordersCustomerFk);
    const res = await call(createHandler(engine), 'POST', '/catalog/entities/customers/rows', {
      write_mode: 'delete',
      rows: [{ id: 3 }],
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('sheet_not_found');
    expect(res.body.detail).toContain('sheet "orders" does not exist');
  });
});
