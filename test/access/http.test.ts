// GET and PUT /access: the policy over HTTP, checked against the catalog before it is stored.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemorySpreadsheets } from '../../src/index.js';
import { customers, CUSTOMER_ROWS, policy } from './policy-example.js';

async function server() {
  const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ crm: { customers: CUSTOMER_ROWS } }) });
  await engine.catalog.registerEntity(customers);
  const handler = createHandler(engine);
  const send = (method: string, body?: unknown, key?: string) =>
    handler(
      new Request('http://localhost/access', {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
  return { engine, send };
}

describe('/access', () => {
  it('GET answers 404 while no policy is stored', async () => {
    const { send } = await server();
    const answer = await send('GET');
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({ code: 'not_found' });
  });

  it('PUT stores a policy that GET reads back; the engine enforces it from then on', async () => {
    const { engine, send } = await server();
    const put = await send('PUT', policy);
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual(policy);
    // From now on the server needs credentials: an admin's key reads the policy back.
    expect((await send('GET')).status).toBe(401);
    const { secret } = await engine.keys.create({ name: 'admin', roles: ['admin'] });
    expect(await (await send('GET', undefined, secret)).json()).toEqual(policy);
    const alice = { id: 'a', kind: 'user' as const, roles: ['sales'], email: 'alice@example.com' };
    const read = await engine.as(alice).catalog.getEntity({ entity_name: 'customers', operation: {} });
    expect(read.body.table.rows).toHaveLength(2);
  });

  it('PUT of a policy naming an unknown column or permission answers 400 naming each, and stores nothing', async () => {
    const { send } = await server();
    const answer = await send('PUT', {
      roles: { sales: { grants: ['entity.reed'] } },
      columns: [{ entity: 'customers', roles: ['sales'], hidden: ['credit'] }],
    });
    expect(answer.status).toBe(400);
    const problem = (await answer.json()) as { errors: { path: string }[] };
    expect(problem.errors.map((i) => i.path)).toEqual(['roles.sales.grants[0]']);
    const second = await send('PUT', {
      roles: { sales: { grants: ['entity.read'] } },
      columns: [{ entity: 'customers', roles: ['sales'], hidden: ['credit'] }],
    });
    expect(second.status).toBe(400);
    expect(((await second.json()) as { errors: { path: string; message: string }[] }).errors).toEqual([
      expect.objectContaining({ path: 'columns[0].hidden[0]', message: expect.stringContaining('"credit"') }),
    ]);
    expect((await send('GET')).status).toBe(404);
  });
});
