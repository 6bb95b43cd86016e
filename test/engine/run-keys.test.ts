import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, MemoryStorage, ValidationError } from '../../src/index.js';
import { createClient, createHandler } from '../../src/http/index.js';
import { call } from '../http/helpers.js';

/** An engine whose `count` action counts its calls and takes a little while, like real work. */
async function counting(storage = new MemoryStorage()) {
  const calls = { count: 0 };
  const engine = new Engine({ storage });
  engine.actions.register({
    provider: 'test',
    module: 'keys',
    action: 'count',
    input: z.looseObject({}),
    run: async () => {
      calls.count += 1;
      await new Promise((r) => setTimeout(r, 20));
      return { n: calls.count };
    },
  });
  for (const name of ['charge', 'refund'])
    await engine.workflows.replace({
      name,
      steps: [{ name: 'count', type: 'l2', l2_data: { provider: 'test', module: 'keys', action: 'count' } }],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
      },
    });
  return { engine, calls };
}

describe('run keys', () => {
  it('a key already used gives the run it started, also for 50 starts at once', async () => {
    const { engine, calls } = await counting();
    const first = await engine.run('charge', { amount: 5 }, { key: 'order-1' });
    const again = await engine.run('charge', { amount: 999 }, { key: 'order-1' });
    expect(again).toEqual(first);
    const burst = await Promise.all(
      Array.from({ length: 50 }, () => engine.start('charge', { amount: 1 }, { key: 'order-2' })),
    );
    const records = await Promise.all(burst.map((h) => h.result));
    expect(new Set(records.map((r) => r.id)).size).toBe(1);
    expect(burst.filter((h) => !h.replayed)).toHaveLength(1);
    expect(calls.count).toBe(2);
    expect((await engine.listRuns()).runs).toHaveLength(2);
  });

  it('keys belong to one workflow', async () => {
    const { engine } = await counting();
    const charge = await engine.run('charge', { amount: 1 }, { key: 'k' });
    const refund = await engine.run('refund', { amount: 1 }, { key: 'k' });
    expect(refund.id).not.toBe(charge.id);
  });

  it('two engines on one storage start one run for one key', async () => {
    const storage = new MemoryStorage();
    const a = await counting(storage);
    const b = await counting(storage);
    const [one, two] = await Promise.all([
      a.engine.run('charge', { amount: 1 }, { key: 'shared' }),
      b.engine.run('charge', { amount: 1 }, { key: 'shared' }),
    ]);
    expect(two.id).toBe(one.id);
    expect(two.status).toBe('succeeded');
    expect(a.calls.count + b.calls.count).toBe(1);
  });

  it('refuses a bad key naming it, and invalid input does not use the key up', async () => {
    const { engine } = await counting();
    for (const key of ['', 'x'.repeat(256), 'line\nbreak'])
      await expect(engine.run('charge', { amount: 1 }, { key })).rejects.toMatchObject({
        issues: [expect.objectContaining({ code: 'invalid_key', path: 'key' })],
      });
    await expect(engine.run('charge', {}, { key: 'late' })).rejects.toBeInstanceOf(ValidationError);
    expect((await engine.run('charge', { amount: 1 }, { key: 'late' })).status).toBe('succeeded');
  });

  it('POST /workflows/{name}/runs with Idempotency-Key answers the same run, marked replayed', async () => {
    const { engine, calls } = await counting();
    const handler = createHandler(engine);
    const headers = { 'idempotency-key': 'pay-77' };
    const first = await call(handler, 'POST', '/workflows/charge/runs', { amount: 3 }, headers);
    const second = await call(handler, 'POST', '/workflows/charge/runs', { amount: 3 }, headers);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.id).toBe(first.body.id);
    expect(first.response.headers.get('idempotent-replayed')).toBeNull();
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
    expect(calls.count).toBe(1);
  });

  it('the typed client sends the key', async () => {
    const { engine, calls } = await counting();
    const handler = createHandler(engine);
    const client = createClient({
      baseUrl: 'http://stepwire.test',
      fetch: (input, init) => handler(new Request(input, init)),
    });
    const one = await client.runWorkflow('charge', { amount: 1 }, { idempotencyKey: 'c-1' });
    const two = await client.runWorkflow('charge', { amount: 1 }, { idempotencyKey: 'c-1' });
    expect(two.id).toBe(one.id);
    expect(calls.count).toBe(1);
  });
});
