import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemoryStorage,
  ValidationError,
  type RunRecord,
  type StorageAdapter,
} from '../../src/index.js';
import { createClient, createHandler } from '../../src/http/index.js';
import { call, expectDocumented } from '../http/helpers.js';

const workflow = (name: string, fail = false) => ({
  name,
  steps: [
    fail
      ? { name: 'a', type: 'request' as const, request_data: { url: 'http://[::1]:1/' } }
      : {
          name: 'a',
          type: 'l2' as const,
          l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task' },
        },
  ],
  wires: [],
});

/** A storage without `listRuns`, so the engine pages through `list('runs')` itself. */
function plainStorage(): StorageAdapter {
  const memory = new MemoryStorage();
  return {
    get: (c, k) => memory.get(c, k),
    put: (c, k, v, o) => memory.put(c, k, v, o),
    delete: (c, k) => memory.delete(c, k),
    list: (c) => memory.list(c),
  };
}

describe.each([
  ['a storage that lists runs itself', () => new MemoryStorage()],
  ['a storage without listRuns', plainStorage],
])('engine.listRuns on %s', (_name, storage) => {
  it('lists newest first, filters by workflow and status, and pages with next', async () => {
    const engine = new Engine({ storage: storage() });
    await engine.workflows.create(workflow('one'));
    await engine.workflows.create(workflow('two', true));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await engine.run('one')).id);
      await new Promise((r) => setTimeout(r, 2));
    }
    const failed = await engine.run('two');
    expect(failed.status).toBe('failed');

    const all = await engine.listRuns();
    expect(all.runs.map((r) => r.id)).toEqual([failed.id, ...ids.reverse()]);
    expect(all.next).toBeUndefined();
    expect((await engine.listRuns({ status: 'failed' })).runs.map((r) => r.id)).toEqual([failed.id]);
    expect((await engine.listRuns({ workflow: 'one' })).runs).toHaveLength(5);

    const first = await engine.listRuns({ workflow: 'one', limit: 2 });
    const second = await engine.listRuns({ workflow: 'one', limit: 2, after: first.next! });
    const third = await engine.listRuns({ workflow: 'one', limit: 2, after: second.next! });
    expect([...first.runs, ...second.runs, ...third.runs].map((r) => r.id)).toEqual(ids);
    expect(third.next).toBeUndefined();
    await expect(engine.listRuns({ limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(engine.listRuns(null as never)).rejects.toThrow(
      'listRuns: the query must be an object, got null',
    );
    // A misspelled status is refused, as GET /runs refuses it, rather than read as "no runs".
    const error = await engine.listRuns({ status: 'faild' as 'failed' }).catch((e: unknown) => e);
    expect((error as ValidationError).issues).toEqual([
      expect.objectContaining({
        path: 'status',
        message: expect.stringMatching(/^status must be one of "queued"/),
      }),
    ]);
  });
});

/** A workflow whose step outputs its input's `text`: a run given a large text has a large record. */
const echo = {
  name: 'echo',
  steps: [
    {
      name: 'echo',
      type: 'l2' as const,
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { text: '{{input.text}}' },
      },
    },
  ],
  wires: [],
};

describe.each([
  ['a storage that lists runs itself', () => new MemoryStorage()],
  ['a storage without listRuns', plainStorage],
])('run lists are summaries, on %s', (_name, storage) => {
  it('engine.listRuns and GET /runs answer id, workflow, status, times and error only', async () => {
    const engine = new Engine({ storage: storage() });
    await engine.workflows.create(echo);
    await engine.workflows.create(workflow('two', true));
    const text = 'x'.repeat(4 * 1024 * 1024);
    const large = [await engine.run('echo', { text }), await engine.run('echo', { text })];
    await new Promise((r) => setTimeout(r, 2));
    const failed = await engine.run('two');
    const { runs } = await engine.listRuns();
    const summary = (record: RunRecord) => ({
      id: record.id,
      workflow: record.workflow,
      status: record.status,
      started_at: record.started_at,
      finished_at: record.finished_at,
      error: record.error && { code: record.error.code, message: record.error.message },
    });
    expect(runs).toEqual([failed, large[1]!, large[0]!].map(summary));
    expect(runs[0]!.error).toEqual({ code: failed.error!.code, message: failed.error!.message });
    for (const run of runs) expect(Object.keys(run)).not.toContain('input');

    const handler = createHandler(engine);
    const page = await call(handler, 'GET', '/runs');
    expect(page.status).toBe(200);
    expect(page.body).toEqual({ runs });
    expect(page.text.length).toBeLessThan(2000);
    expectDocumented('runs.list', 200, page.response, page.body);
    // The whole record stays at GET /runs/{id}.
    const one = await call(handler, 'GET', `/runs/${large[0]!.id}`);
    expect((one.body as RunRecord).steps[0]!.output).toEqual({ text });
  });
});

describe('GET /runs', () => {
  it('answers a page of run records, and 400 naming a bad filter', async () => {
    const engine = new Engine();
    await engine.workflows.create(workflow('one'));
    const run = await engine.run('one');
    const handler = createHandler(engine);
    const page = await call(handler, 'GET', '/runs?workflow=one&limit=10');
    expect(page.status).toBe(200);
    expect(page.body.runs.map((r: { id: string }) => r.id)).toEqual([run.id]);
    const bad = await call(handler, 'GET', '/runs?status=lost');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('status');
    const cursor = await call(handler, 'GET', '/runs?after=nonsense');
    expect(cursor.status).toBe(400);
    expect(cursor.body.errors[0].path).toBe('after');
    // limit is a whole number in decimal digits: what Number() would also read is refused.
    for (const limit of ['0x10', '1e1', '%203%20', '+5', '5.0', '0', '1001', '0010']) {
      const odd = await call(handler, 'GET', `/runs?limit=${limit}`);
      expect(odd.status, limit).toBe(400);
      expect(odd.body.errors[0].path).toBe('limit');
    }
    expect((await call(handler, 'GET', '/runs?limit=1000')).status).toBe(200);
    expect(
      (
        await createClient({
          fetch: (input, init) => handler(new Request(input, init)),
          baseUrl: 'http://x',
        }).listRuns({ limit: 1 })
      ).runs,
    ).toHaveLength(1);
  });
});
