import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { call, expectDocumented } from './helpers.js';

/** An engine with a workflow whose one step waits `ms` (default 100) and then answers `{ done: true }`. */
async function slowEngine(ms = 100) {
  const engine = new Engine();
  let started = 0;
  engine.actions.register({
    provider: 'test',
    module: 'clock',
    action: 'wait',
    input: z.object({}).passthrough(),
    run: async () => {
      started++;
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { done: true };
    },
  });
  await engine.workflows.create({
    name: 'slow',
    steps: [
      {
        name: 'wait',
        type: 'l2',
        l2_data: { provider: 'test', module: 'clock', action: 'wait', input_data: {} },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { n: { type: 'number' } } },
    },
  });
  return { engine, started: () => started };
}

const ASYNC = { prefer: 'respond-async' };

describe('POST /workflows/{name}/runs with Prefer: respond-async', () => {
  it('answers 202 { run_id } at once with Location and Preference-Applied; the run goes on to its end', async () => {
    const { engine } = await slowEngine(300);
    const handler = createHandler(engine, { basePath: '/api' });
    const started = await call(handler, 'POST', '/api/workflows/slow/runs', { n: 1 }, ASYNC);
    expect(started.status).toBe(202);
    // The answer did not wait: the run is still running.
    expect((await engine.getRun(started.body.run_id)).status).toBe('running');
    expect(Object.keys(started.body)).toEqual(['run_id']);
    const id = started.body.run_id as string;
    expect(started.response.headers.get('location')).toBe(`/api/runs/${id}`);
    expect(started.response.headers.get('preference-applied')).toBe('respond-async');
    expect(started.response.headers.has('idempotent-replayed')).toBe(false);
    expectDocumented('workflows.run', 202, started.response, started.body);
    await expect
      .poll(async () => (await call(handler, 'GET', `/api/runs/${id}`)).body.status)
      .toBe('succeeded');
    expect((await engine.getRun(id)).output).toEqual({ wait: { done: true } });
  });

  it('reads the preference among others, in any case, with parameters, over several headers', async () => {
    const { engine } = await slowEngine(1);
    const handler = createHandler(engine);
    for (const prefer of [
      'return=minimal, respond-async',
      'RESPOND-ASYNC',
      ' respond-async ; x=1',
      'wait=5,respond-async',
    ]) {
      const answer = await call(handler, 'POST', '/workflows/slow/runs', {}, { prefer });
      expect(answer.status, prefer).toBe(202);
    }
    const headers = new Headers([
      ['prefer', 'return=minimal'],
      ['prefer', 'respond-async'],
    ]);
    headers.set('content-type', 'application/json');
    const both = await handler(
      new Request('http://localhost/workflows/slow/runs', { method: 'POST', body: '{}', headers }),
    );
    expect(both.status).toBe(202);
    // Other preferences alone, or a name that only starts alike, wait for the run.
    for (const prefer of ['return=minimal', 'respond-asynchronously', 'wait=1']) {
      const answer = await call(handler, 'POST', '/workflows/slow/runs', {}, { prefer });
      expect(answer.status, prefer).toBe(200);
      expect(answer.body.status).toBe('succeeded');
      expect(answer.response.headers.has('preference-applied')).toBe(false);
    }
  });

  it('with an Idempotency-Key used before: 200 { run_id } of the run it started, run once', async () => {
    const { engine, started } = await slowEngine();
    const handler = createHandler(engine);
    const key = { ...ASYNC, 'idempotency-key': 'order-7' };
    const first = await call(handler, 'POST', '/workflows/slow/runs', {}, key);
    expect(first.status).toBe(202);
    const again = await call(handler, 'POST', '/workflows/slow/runs', {}, key);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ run_id: first.body.run_id });
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.response.headers.get('preference-applied')).toBe('respond-async');
    expect(again.response.headers.get('location')).toBe(`/runs/${first.body.run_id}`);
    expectDocumented('workflows.run', 200, again.response, again.body);
    // The same key without the preference waits for that run and answers its record.
    const waited = await call(handler, 'POST', '/workflows/slow/runs', {}, { 'idempotency-key': 'order-7' });
    expect(waited.status).toBe(200);
    expect(waited.body).toMatchObject({ id: first.body.run_id, status: 'succeeded' });
    expect(started()).toBe(1);
    expect((await engine.listRuns({})).runs).toHaveLength(1);
  });

  it('invalid input is 400 and an unknown workflow 404, as without the preference: nothing runs', async () => {
    const { engine, started } = await slowEngine();
    const handler = createHandler(engine);
    const invalid = await call(handler, 'POST', '/workflows/slow/runs', { n: 'one' }, ASYNC);
    expect(invalid.status).toBe(400);
    expect(invalid.response.headers.has('preference-applied')).toBe(false);
    const unknown = await call(handler, 'POST', '/workflows/nothing/runs', {}, ASYNC);
    expect(unknown.status).toBe(404);
    expect(started()).toBe(0);
    expect((await engine.listRuns({})).runs).toHaveLength(0);
  });

  it('a run started at once can be cancelled by POST /runs/{id}/cancel', async () => {
    const { engine } = await slowEngine(5_000);
    const handler = createHandler(engine);
    const { body } = await call(handler, 'POST', '/workflows/slow/runs', {}, ASYNC);
    const cancel = await call(handler, 'POST', `/runs/${body.run_id}/cancel`);
    expect(cancel.body).toEqual({ cancelled: true });
    await expect.poll(async () => (await engine.getRun(body.run_id)).status).toBe('cancelled');
  });

  it('the client: startRun resolves with the run id at once, runWorkflow waits for the record', async () => {
    const { engine } = await slowEngine();
    const handler = createHandler(engine);
    const client = createClient({
      baseUrl: 'http://stepwire.test',
      retry: 0,
      fetch: async (input, init) => handler(new Request(input, init)),
    });
    const started = await client.startRun('slow', { n: 2 }, { idempotencyKey: 'k-1' });
    expect(started.replayed).toBe(false);
    expect(await client.startRun('slow', { n: 2 }, { idempotencyKey: 'k-1' })).toEqual({
      run_id: started.run_id,
      replayed: true,
    });
    expect((await client.getRun(started.run_id)).status).toBe('running');
    const record = await client.runWorkflow('slow', { n: 3 });
    expect(record.status).toBe('succeeded');
    await expect.poll(async () => (await client.getRun(started.run_id)).status).toBe('succeeded');
  });
});
