import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { customersEntity } from '../fixtures.js';
import { call } from './helpers.js';

const PROTO = '"__proto__":{"polluted":true}';

describe('"__proto__" keys in JSON bodies', () => {
  it('are data: never a prototype, kept in a run input, dropped from definitions, refused by strict bodies', async () => {
    const engine = new Engine();
    await engine.catalog.registerEntity(customersEntity);
    const handler = createHandler(engine);
    const created = await call(
      handler,
      'POST',
      '/workflows',
      `{${PROTO},"name":"echo","steps":[],"wires":[]}`,
    );
    expect(created.status).toBe(201);
    expect(Object.keys(created.body)).toEqual(['name', 'steps', 'wires']);

    const run = await call(handler, 'POST', '/workflows/echo/runs', `{${PROTO},"a":1}`);
    expect(run.status).toBe(200);
    expect(run.text).toContain('"input":{"__proto__":{"polluted":true},"a":1}');

    await call(handler, 'POST', '/triggers', {
      name: 'hook',
      type: 'webhook',
      workflow_name: 'echo',
      webhook_data: {},
    });
    const hook = await call(handler, 'POST', '/hooks/hook', `{${PROTO},"a":2}`);
    expect(hook.status).toBe(202);
    const record = await engine.getRun(hook.body.run_id);
    expect(Object.getPrototypeOf(record.input)).toBe(Object.prototype);
    expect(Object.hasOwn(record.input as object, '__proto__')).toBe(true);

    const read = await call(handler, 'POST', '/catalog/entities/customers/read', `{${PROTO}}`);
    expect(read.status).toBe(400);
    expect(read.body.errors[0].message).toContain('unknown property "__proto__"');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('repeated keys: the last one counts, as JSON.parse reads them', async () => {
    const handler = createHandler(new Engine());
    const res = await call(
      handler,
      'POST',
      '/workflows',
      '{"name":"first","name":"last","steps":[],"wires":[]}',
    );
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('last');
    expect((await call(handler, 'GET', '/workflows/first')).status).toBe(404);
  });
});

describe('a body with very many problems', () => {
  it('answers the first 1,000 issues and one more_problems issue saying how many more', async () => {
    const engine = new Engine();
    await engine.catalog.registerEntity(customersEntity);
    const body: Record<string, unknown> = { operation: {} };
    for (let i = 0; i < 1500; i++) body[`k${i}`] = 1;
    const read = await call(createHandler(engine), 'POST', '/catalog/entities/customers/read', body);
    expect(read.status).toBe(400);
    expect(read.body.errors).toHaveLength(1001);
    expect(read.body.errors[999]).toMatchObject({ code: 'unknown_property', path: 'k999' });
    expect(read.body.errors[1000]).toEqual({
      code: 'more_problems',
      path: '',
      message: 'and 500 more problems',
    });
  });
});
