import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../../src/node/serve.js';
import { HttpProblemError, createClient, createHandler, type StepwireClient } from '../../src/http/index.js';
import { StepwireError } from '../../src/index.js';
import { shopEngine } from '../engine/helpers.js';
import { customersEntity, ordersEntity } from '../fixtures.js';
import { failingWorkflow, lookupWorkflow } from './helpers.js';

let server: RunningServer;
let client: StepwireClient;

beforeAll(async () => {
  const { engine } = await shopEngine();
  server = await serve(createHandler(engine, { basePath: '/api' }), { port: 0 });
  client = createClient({ baseUrl: `${server.url}/api`, retry: 0 });
});
afterAll(() => server.close());

describe('createClient against the handler served by node:http', () => {
  it('serves on 127.0.0.1 and closes', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('covers the catalog routes', async () => {
    expect((await client.listEntities()).map((e) => e.name)).toEqual(['customers', 'orders']);
    expect(await client.getEntityDefinition('customers')).toEqual(customersEntity);
    const renamed = { ...customersEntity, name: 'clients with spaces' };
    expect(await client.registerEntity(renamed)).toEqual(renamed);
    expect(await client.upsertEntity({ ...renamed, description: 'v2' })).toEqual({
      entity: { ...renamed, description: 'v2' },
      created: false,
    });
    expect((await client.upsertEntity({ ...renamed, name: 'fresh' })).created).toBe(true);
    const rel = await client.createRelationship({
      name: 'orders_clients',
      relationship_type: 'foreign_key',
      source_entity: ordersEntity.name,
      target_entity: 'clients with spaces',
      foreign_key_config: {
        source_columns: ['customer_id'],
        target_columns: ['id'],
        enforce_foreign_key: false,
      },
    });
    expect(rel.name).toBe('orders_clients');
    const read = await client.readEntity('customers', {
      operation: { order_by: [{ column: 'id', direction: 'DESC' }] },
      page_size: 2,
    });
    expect(read.body.table.rows).toEqual([
      [3, 'Linus', 'Helsinki'],
      [2, 'Grace', 'New York'],
    ]);
  });

  it('surfaces problem details as HttpProblemError with status, problem and issues', async () => {
    const error = await client.registerEntity({ ...customersEntity, columns: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpProblemError);
    expect(error).toBeInstanceOf(StepwireError);
    const problem = error as HttpProblemError;
    expect(problem.status).toBe(400);
    expect(problem.code).toBe('validation_failed');
    expect(problem.problem.title).toBe('Bad Request');
    expect(problem.issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: 'columns', code: 'too_small' })]),
    );
    const conflict = (await client
      .registerEntity(customersEntity)
      .catch((e: unknown) => e)) as HttpProblemError;
    expect(conflict.status).toBe(409);
    const missing = (await client.getWorkflow('nope').catch((e: unknown) => e)) as HttpProblemError;
    expect(missing.status).toBe(404);
    expect(missing.message).toBe('404 Not Found: workflow "nope" does not exist');
    // A name a URL segment cannot carry would call another route (`/workflows/` is the list).
    for (const name of ['', '.', '..']) {
      const refused = await client.getWorkflow(name).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(TypeError);
      expect((refused as Error).message).toMatch(/^workflows\.get: the path parameter "name" cannot be/);
    }
  });

  it('covers workflows and runs', async () => {
    expect((await client.createWorkflow(lookupWorkflow)).name).toBe('lookup customer');
    expect(await client.replaceWorkflow({ ...lookupWorkflow, description: 'v2' })).toMatchObject({
      created: false,
      workflow: { description: 'v2' },
    });
    expect((await client.listWorkflows()).map((w) => w.name)).toContain('lookup customer');
    expect((await client.getWorkflow('lookup customer')).description).toBe('v2');
    const run = await client.runWorkflow('lookup customer', { id: 3 });
    expect(run.status).toBe('succeeded');
    expect(run.output).toEqual({ rows: [[3, 'Linus', 'Helsinki']] });
    expect(await client.getRun(run.id)).toEqual(run);
    await client.createWorkflow(failingWorkflow);
    expect((await client.runWorkflow('always fails')).status).toBe('failed');
    const invalid = (await client
      .runWorkflow('lookup customer', { id: 'x' })
      .catch((e: unknown) => e)) as HttpProblemError;
    expect(invalid.status).toBe(400);
    expect(invalid.issues[0]?.path).toBe('id');
    await client.deleteWorkflow('always fails');
    expect(
      ((await client.deleteWorkflow('always fails').catch((e: unknown) => e)) as HttpProblemError).status,
    ).toBe(404);
  });

  it('covers scripts and applications', async () => {
    expect(await client.putScript('s 1', 'writeEntity("x", []);')).toEqual({ name: 's 1', created: true });
    expect(await client.putScript('s 1', '// v2')).toEqual({ name: 's 1', created: false });
    expect(await client.getScript('s 1')).toBe('// v2');
    expect(await client.listScripts()).toEqual(['s 1']);
    await client.deleteScript('s 1');
    expect(await client.listScripts()).toEqual([]);
    const app = {
      start_screen_url: 'home',
      screens: [
        {
          url: 'home',
          components: [[{ name: 'grid', type: 'datagrid' as const, datagrid: { entity_name: 'customers' } }]],
        },
      ],
    };
    expect((await client.putApplication('shop app', app)).created).toBe(true);
    expect((await client.getApplication('shop app')).start_screen_url).toBe('home');
    expect(await client.listApplications()).toEqual(['shop app']);
    expect(await client.renderScreen('shop app', 'home')).toContain('Linus');
    await client.deleteApplication('shop app');
    expect((await client.openapi())['openapi']).toBe('3.1.0');
  });

  it('streams a large body through the bridge and answers 413 past the limit', async () => {
    const big = JSON.stringify({ id: 1, pad: 'x'.repeat(2 * 1024 * 1024) });
    const res = await fetch(`${server.url}/api/workflows/lookup%20customer/runs`, {
      method: 'POST',
      body: big,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('limit_exceeded');
  });
});

describe('client retries', () => {
  async function flaky(failures: number, status = 503) {
    let calls = 0;
    const srv = createServer((req, res) => {
      calls++;
      req.resume();
      if (calls <= failures) {
        res.writeHead(status, { 'content-type': 'application/problem+json' });
        res.end(
          JSON.stringify({
            type: 'about:blank',
            status,
            title: 'Service Unavailable',
            detail: 'try later',
            code: 'busy',
            errors: [],
          }),
        );
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('[]');
      }
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    return { url, calls: () => calls, close: () => new Promise<void>((r) => srv.close(() => r())) };
  }

  it('retries GET, PUT and DELETE on 5xx, never POST', async () => {
    const get = await flaky(2);
    const c = createClient({ baseUrl: get.url, retry: { limit: 2, backoffLimit: 10 } });
    expect(await c.listWorkflows()).toEqual([]);
    expect(get.calls()).toBe(3);
    await get.close();

    const post = await flaky(1);
    const p = createClient({ baseUrl: post.url, retry: { limit: 2, backoffLimit: 10 } });
    const error = (await p.createWorkflow(lookupWorkflow).catch((e: unknown) => e)) as HttpProblemError;
    expect(error.status).toBe(503);
    expect(error.problem.detail).toBe('try later');
    expect(post.calls()).toBe(1);
    await post.close();

    const notFound = await flaky(1, 404);
    const n = createClient({ baseUrl: notFound.url, retry: { limit: 2, backoffLimit: 10 } });
    expect(((await n.deleteScript('x').catch((e: unknown) => e)) as HttpProblemError).status).toBe(404);
    expect(notFound.calls()).toBe(1);
    await notFound.close();
  });
});
