import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { customersEntity } from '../fixtures.js';
import { call } from './helpers.js';

async function setup() {
  const engine = new Engine();
  await engine.catalog.registerEntity(customersEntity);
  await engine.workflows.create({ name: 'echo', steps: [], wires: [] });
  await engine.triggers.create({ name: 'hook', type: 'webhook', workflow_name: 'echo', webhook_data: {} });
  return { engine, handler: createHandler(engine) };
}

describe('a JSON null body is a value, not an empty body', () => {
  it('is refused where the body must be an object: 400 naming the value, and nothing is done', async () => {
    const { engine, handler } = await setup();
    for (const path of [
      '/catalog/entities/customers/read',
      '/catalog/entities/customers/rows',
      '/catalog/entity',
    ]) {
      const res = await call(handler, 'POST', path, 'null');
      expect(res.status, path).toBe(400);
      expect(res.response.headers.get('content-type'), path).toBe('application/problem+json');
      expect(res.body.errors, path).toContainEqual(
        expect.objectContaining({ code: 'invalid_type', path: '', message: expect.stringContaining('null') }),
      );
    }
    const hook = await call(handler, 'POST', '/hooks/hook', 'null');
    expect(hook.status).toBe(400);
    expect(hook.body.detail).toBe('The body must be a JSON object.');
    expect((await engine.listRuns({})).runs).toEqual([]);
  });

  it('while an empty body still reads as {}', async () => {
    const { handler } = await setup();
    const read = await call(handler, 'POST', '/catalog/entities/customers/read', '', {
      'content-type': 'application/json',
    });
    expect(read.status).toBe(200);
    expect((await call(handler, 'POST', '/hooks/hook')).status).toBe(202);
  });
});
