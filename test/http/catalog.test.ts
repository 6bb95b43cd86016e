import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { customersEntity, ordersCustomerFk, ordersEntity } from '../fixtures.js';
import { shopEngine } from '../engine/helpers.js';
import { Engine, MemorySpreadsheets } from '../../src/index.js';
import { shopSheets } from '../fixtures.js';
import { call, expectDocumented } from './helpers.js';

function emptyShop() {
  const engine = new Engine({ spreadsheets: new MemorySpreadsheets(shopSheets()) });
  return { engine, handler: createHandler(engine) };
}

describe('POST /catalog/entity', () => {
  it('registers an entity: 201 with the entity and its Location', async () => {
    const { engine, handler } = emptyShop();
    const res = await call(handler, 'POST', '/catalog/entity', customersEntity);
    expect(res.status).toBe(201);
    expect(res.body).toEqual(customersEntity);
    expect(res.response.headers.get('location')).toBe('/catalog/entities/customers');
    expectDocumented('catalog.registerEntity', 201, res.response, res.body);
    expect(await engine.catalog.getDefinition('customers')).toEqual(customersEntity);
  });

  it('answers 400 problem+json listing every problem with its path', async () => {
    const { handler } = emptyShop();
    const res = await call(handler, 'POST', '/catalog/entity', {
      ...customersEntity,
      columns: [{ name: 'id', type: 'INT' }],
      spreadsheet_config: { spreadsheet_id: 'shop' },
    });
    expect(res.status).toBe(400);
    expect(res.response.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body).toMatchObject({
      type: 'urn:stepwire:problem:validation_failed',
      status: 400,
      title: 'Bad Request',
      code: 'validation_failed',
    });
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'columns[0].type',
        'spreadsheet_config.sheet_name',
        'spreadsheet_config.origin',
      ]),
    );
    for (const error of res.body.errors)
      expect(Object.keys(error).sort()).toEqual(['code', 'message', 'path']);
    expectDocumented('catalog.registerEntity', 400, res.response, res.body);
  });

  it('answers 409 when the name is taken', async () => {
    const { handler } = emptyShop();
    await call(handler, 'POST', '/catalog/entity', customersEntity);
    const res = await call(handler, 'POST', '/catalog/entity', customersEntity);
    expect(res.status).toBe(409);
    expect(res.body.detail).toBe('entity "customers" already exists');
    expectDocumented('catalog.registerEntity', 409, res.response, res.body);
  });
});

describe('POST /catalog/entities/spreadsheet/register', () => {
  it('answers 201 when it creates and 200 when it replaces', async () => {
    const { engine, handler } = emptyShop();
    const first = await call(handler, 'POST', '/catalog/entities/spreadsheet/register', customersEntity);
    expect(first.status).toBe(201);
    expectDocumented('catalog.upsertEntity', 201, first.response, first.body);
    const changed = { ...customersEntity, description: 'changed' };
    const second = await call(handler, 'POST', '/catalog/entities/spreadsheet/register', changed);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(changed);
    expectDocumented('catalog.upsertEntity', 200, second.response, second.body);
    expect((await engine.catalog.getDefinition('customers')).description).toBe('changed');
  });
});

describe('POST /catalog/entity/relationship', () => {
  it('creates (201), rejects bad columns (400), unknown entities (404) and taken names (409)', async () => {
    const { handler } = emptyShop();
    await call(handler, 'POST', '/catalog/entity', customersEntity);
    const missing = await call(handler, 'POST', '/catalog/entity/relationship', ordersCustomerFk);
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('"orders"');
    expect(missing.body.errors).toEqual([
      { code: 'not_found', path: 'source_entity', message: 'entity "orders" does not exist' },
    ]);
    expectDocumented('catalog.createRelationship', 404, missing.response, missing.body);
    const neither = await call(handler, 'POST', '/catalog/entity/relationship', {
      ...ordersCustomerFk,
      source_entity: 'ghost',
      target_entity: 'ghost',
    });
    expect(neither.status).toBe(404);
    expect(neither.body.errors.map((issue: { path: string }) => issue.path)).toEqual([
      'source_entity',
      'target_entity',
    ]);

    await call(handler, 'POST', '/catalog/entity', ordersEntity);
    const bad = await call(handler, 'POST', '/catalog/entity/relationship', {
      ...ordersCustomerFk,
      foreign_key_config: { ...ordersCustomerFk.foreign_key_config, source_columns: ['ghost'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      expect.objectContaining({ code: 'unknown_column', path: 'foreign_key_config.source_columns[0]' }),
    ]);

    const created = await call(handler, 'POST', '/catalog/entity/relationship', ordersCustomerFk);
    expect(created.status).toBe(201);
    expect(created.body).toEqual(ordersCustomerFk);
    expectDocumented('catalog.createRelationship', 201, created.response, created.body);
    expect((await call(handler, 'POST', '/catalog/entity/relationship', ordersCustomerFk)).status).toBe(409);
  });
});

describe('GET /catalog/entities[/{name}]', () => {
  it('lists definitions and reads one; 404 for an unknown name; names with spaces work', async () => {
    const { handler } = emptyShop();
    const spaced = { ...customersEntity, name: 'big customers - EU' };
    await call(handler, 'POST', '/catalog/entity', customersEntity);
    const slashed = await call(handler, 'POST', '/catalog/entity', { ...spaced, name: 'big customers / EU' });
    expect(slashed.status).toBe(400);
    expect(slashed.body.errors[0]).toMatchObject({ code: 'invalid_name', path: 'name' });
    const created = await call(handler, 'POST', '/catalog/entity', spaced);
    expect(created.response.headers.get('location')).toBe('/catalog/entities/big%20customers%20-%20EU');
    const list = await call(handler, 'GET', '/catalog/entities');
    expect(list.status).toBe(200);
    expect(list.body.map((e: { name: string }) => e.name)).toEqual(['big customers - EU', 'customers']);
    expectDocumented('catalog.listEntities', 200, list.response, list.body);
    const one = await call(handler, 'GET', '/catalog/entities/big%20customers%20-%20EU');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(spaced);
    expectDocumented('catalog.getEntityDefinition', 200, one.response, one.body);
    const none = await call(handler, 'GET', '/catalog/entities/nobody');
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('not_found');
    expectDocumented('catalog.getEntityDefinition', 404, none.response, none.body);
  });
});

describe('POST /catalog/entities/{name}/read', () => {
  it('answers 200 with the get_entity output', async () => {
    const { engine } = await shopEngine();
    const handler = createHandler(engine);
    const res = await call(handler, 'POST', '/catalog/entities/orders/read', {
      operation: {
        filters: [{ column: 'customer_id', operator: 'EQUALS', value_type: 'NUMBER', value: 1 }],
        order_by: [{ column: 'amount', direction: 'DESC' }],
      },
      page_size: 10,
      page_number: 1,
    });
    expect(res.status).toBe(200);
    expect(res.body.body.error).toEqual({ is_error: false, errors: [] });
    expect(res.body.body.table.rows).toEqual([
      [11, 1, 'Desk', 150.5],
      [10, 1, 'Lamp', 25],
    ]);
    expectDocumented('catalog.readEntity', 200, res.response, res.body);
    const direct = await engine.catalog.getEntity({
      entity_name: 'orders',
      operation: {
        filters: [{ column: 'customer_id', operator: 'EQUALS', value_type: 'NUMBER', value: 1 }],
        order_by: [{ column: 'amount', direction: 'DESC' }],
      },
      page_size: 10,
      page_number: 1,
    });
    expect(res.body).toEqual(direct);
  });

  it('reads page 1 of every column for an empty body', async () => {
    const { engine } = await shopEngine();
    const res = await call(createHandler(engine), 'POST', '/catalog/entities/customers/read');
    expect(res.status).toBe(200);
    expect(res.body.body.table.rows).toHaveLength(3);
  });

  it('answers 200 with body.error for a data error, as the spec shapes it', async () => {
    const { engine } = await shopEngine();
    const res = await call(createHandler(engine), 'POST', '/catalog/entities/orders/read', {
      operation: { select_columns: [{ column: 'ghost' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.body.error.is_error).toBe(true);
    expect(res.body.body.error.errors.join(' ')).toContain('ghost');
    expectDocumented('catalog.readEntity', 200, res.response, res.body);
  });

  it('answers 400 for an invalid body (strict) and 404 for an unknown entity', async () => {
    const { engine } = await shopEngine();
    const handler = createHandler(engine);
    const bad = await call(handler, 'POST', '/catalog/entities/orders/read', {
      operation: { filters: [{ column: 'x', operator: 'LIKE' }] },
      page_size: 0,
      extra: 1,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'extra',
      'operation.filters[0].operator',
      'page_size',
    ]);
    expectDocumented('catalog.readEntity', 400, bad.response, bad.body);
    const none = await call(handler, 'POST', '/catalog/entities/ghost/read', {});
    expect(none.status).toBe(404);
    expectDocumented('catalog.readEntity', 404, none.response, none.body);
  });
});
