// What the entity read and row-write routes check before they read the body: the entity exists
// (404) and the principal may see it (403), as `getDefinition` decides, and a definition changed
// meanwhile is the one read.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemorySpreadsheets, type AccessPolicy } from '../../src/index.js';
import { customersEntity } from '../fixtures.js';
import { call } from './helpers.js';

const policy: AccessPolicy = {
  roles: { sales: { grants: ['entity.read:customers'] }, other: { grants: ['entity.read:orders'] } },
};

async function start() {
  const engine = new Engine({
    spreadsheets: new MemorySpreadsheets({
      shop: {
        customers: [
          ['id', 'name', 'city'],
          [1, 'Ada', 'London'],
        ],
      },
    }),
    access: policy,
  });
  await engine.catalog.registerEntity(customersEntity);
  const sales = await engine.keys.create({ name: 'sales', roles: ['sales'] });
  const other = await engine.keys.create({ name: 'other', roles: ['other'] });
  return { engine, handler: createHandler(engine), sales: sales.secret, other: other.secret };
}

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

describe('the entity routes before the body', () => {
  it('read: 404 for an unknown entity, even with a body that is no JSON; 403 for one it may not see', async () => {
    const { handler, sales, other } = await start();
    const missing = await call(handler, 'POST', '/catalog/entities/nope/read', '{', bearer(sales));
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
    const hidden = await call(handler, 'POST', '/catalog/entities/customers/read', {}, bearer(other));
    expect(hidden.status).toBe(403);
    const seen = await call(handler, 'POST', '/catalog/entities/customers/read', {}, bearer(sales));
    expect(seen.status).toBe(200);
    expect(seen.body.body.table.rows).toEqual([[1, 'Ada', 'London']]);
  });

  it('rows: 404 for an unknown entity before the body, 403 for one it may not see', async () => {
    const { handler, other } = await start();
    const missing = await call(handler, 'POST', '/catalog/entities/nope/rows', '{', bearer(other));
    expect(missing.status).toBe(404);
    const hidden = await call(
      handler,
      'POST',
      '/catalog/entities/customers/rows',
      { rows: [{ id: 2, name: 'Grace', city: 'Arlington' }] },
      bearer(other),
    );
    expect(hidden.status).toBe(403);
  });

  it('reads by the definition as stored now, after it changed', async () => {
    const { engine, handler, sales } = await start();
    const first = await call(handler, 'POST', '/catalog/entities/customers/read', {}, bearer(sales));
    expect(first.body.body.table.columns.map((c: { name: string }) => c.name)).toEqual([
      'id',
      'name',
      'city',
    ]);
    await engine.catalog.upsertEntity({
      ...customersEntity,
      columns: customersEntity.columns.filter((c) => c.name !== 'city'),
    });
    const second = await call(handler, 'POST', '/catalog/entities/customers/read', {}, bearer(sales));
    expect(second.status).toBe(200);
    expect(second.body.body.table.columns.map((c: { name: string }) => c.name)).toEqual(['id', 'name']);
  });

  it('answers as getEntity in-process, the body checked once: reads, a data error, a bad body', async () => {
    const { engine, handler, sales } = await start();
    const bodies = [
      {},
      { operation: { filters: [{ column: 'city', operator: 'EQUALS', value: 'London' }] }, page_size: 1 },
      {
        operation: {
          select_columns: [{ column: 'name', alias: 'who' }],
          order_by: [{ column: 'id', direction: 'DESC' }],
        },
      },
      { operation: { filters: [{ column: 'nope', operator: 'EQUALS', value: 1 }] } },
    ];
    for (const body of bodies) {
      const answer = await call(handler, 'POST', '/catalog/entities/customers/read', body, bearer(sales));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(
        JSON.parse(
          JSON.stringify(
            await engine.catalog.getEntity({ entity_name: 'customers', operation: {}, ...body } as never),
          ),
        ),
      );
    }
    const bad = await call(
      handler,
      'POST',
      '/catalog/entities/customers/read',
      { operation: { filters: 'all' } },
      bearer(sales),
    );
    expect(bad.status).toBe(400);
  });
});
