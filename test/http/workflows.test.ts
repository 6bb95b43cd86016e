import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { shopEngine } from '../engine/helpers.js';
import { call, expectDocumented, failingWorkflow, lookupWorkflow } from './helpers.js';

async function setup() {
  const { engine } = await shopEngine();
  return { engine, handler: createHandler(engine) };
}

const path = '/workflows/lookup%20customer';

describe('workflow definitions over HTTP', () => {
  it('POST creates (201), rejects invalid (400) and taken names (409)', async () => {
    const { handler } = await setup();
    const created = await call(handler, 'POST', '/workflows', lookupWorkflow);
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('lookup customer');
    expect(created.response.headers.get('location')).toBe(path);
    expectDocumented('workflows.create', 201, created.response, created.body);
    const taken = await call(handler, 'POST', '/workflows', lookupWorkflow);
    expect(taken.status).toBe(409);
    const invalid = await call(handler, 'POST', '/workflows', {
      ...lookupWorkflow,
      name: 'x',
      steps: [{ name: 'a', type: 'l2', l2_data: { provider: 'nope', module: 'm', action: 'z' } }],
      wires: [{ source_name: 'a', target_name: 'ghost' }],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'wires[0].target_name', code: 'unknown_step' }),
      ]),
    );
    expectDocumented('workflows.create', 400, invalid.response, invalid.body);
  });

  it('PUT creates (201) then replaces (200); a body name other than the path is a 400', async () => {
    const { handler } = await setup();
    const first = await call(handler, 'PUT', path, lookupWorkflow);
    expect(first.status).toBe(201);
    expectDocumented('workflows.replace', 201, first.response, first.body);
    const second = await call(handler, 'PUT', path, { ...lookupWorkflow, description: 'v2' });
    expect(second.status).toBe(200);
    expect(second.body.description).toBe('v2');
    expectDocumented('workflows.replace', 200, second.response, second.body);
    const unnamed = await call(handler, 'PUT', path, {
      ...lookupWorkflow,
      name: undefined,
      description: 'v3',
    });
    expect(unnamed.status).toBe(200);
    expect(unnamed.body.name).toBe('lookup customer');
    const mismatch = await call(handler, 'PUT', path, { ...lookupWorkflow, name: 'other' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors).toEqual([expect.objectContaining({ code: 'name_mismatch', path: 'name' })]);
  });

  it('GET lists and reads; DELETE answers 204 then 404', async () => {
    const { handler } = await setup();
    await call(handler, 'POST', '/workflows', lookupWorkflow);
    const list = await call(handler, 'GET', '/workflows');
    expect(list.body.map((w: { name: string }) => w.name)).toEqual(['lookup customer']);
    expectDocumented('workflows.list', 200, list.response, list.body);
    const one = await call(handler, 'GET', path);
    expect(one.status).toBe(200);
    expectDocumented('workflows.get', 200, one.response, one.body);
    const deleted = await call(handler, 'DELETE', path);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    const again = await call(handler, 'DELETE', path);
    expect(again.status).toBe(404);
    expectDocumented('workflows.delete', 404, again.response, again.body);
    expect((await call(handler, 'GET', path)).status).toBe(404);
  });
});

describe('POST /workflows/{name}/runs and GET /runs/{id}', () => {
  it('runs a workflow: 200 with the succeeded record; the record can be read back', async () => {
    const { handler } = await setup();
    await call(handler, 'POST', '/workflows', lookupWorkflow);
    const run = await call(handler, 'POST', `${path}/runs`, { id: 2 });
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('succeeded');
    expect(run.body.output).toEqual({ rows: [[2, 'Grace', 'New York']] });
    expect(run.body.steps.map((s: { name: string; status: string }) => `${s.name}:${s.status}`)).toEqual([
      'hello:succeeded',
      'read:succeeded',
    ]);
    expect(run.response.headers.get('location')).toBe(`/runs/${run.body.id}`);
    expectDocumented('workflows.run', 200, run.response, run.body);
    const record = await call(handler, 'GET', `/runs/${encodeURIComponent(run.body.id)}`);
    expect(record.status).toBe(200);
    expect(record.body).toEqual(run.body);
    expectDocumented('runs.get', 200, record.response, record.body);
    const missing = await call(handler, 'GET', '/runs/nope');
    expect(missing.status).toBe(404);
    expectDocumented('runs.get', 404, missing.response, missing.body);
  });

  it('answers 200 with a failed record when a step fails', async () => {
    const { handler } = await setup();
    await call(handler, 'POST', '/workflows', failingWorkflow);
    const run = await call(handler, 'POST', '/workflows/always%20fails/runs');
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('failed');
    expect(run.body.error.step).toBe('call');
    expectDocumented('workflows.run', 200, run.response, run.body);
  });

  it('answers 400 for invalid input (nothing runs) and 404 for an unknown workflow', async () => {
    const { engine, handler } = await setup();
    await call(handler, 'POST', '/workflows', lookupWorkflow);
    const invalid = await call(handler, 'POST', `${path}/runs`, { id: 'two' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors).toEqual([expect.objectContaining({ path: 'id', code: 'invalid_type' })]);
    expectDocumented('workflows.run', 400, invalid.response, invalid.body);
    const missing = await call(handler, 'POST', `${path}/runs`);
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].message).toMatch(/id/);
    expect(await engine.options.storage.list('runs')).toEqual([]);
    const unknown = await call(handler, 'POST', '/workflows/ghost/runs', {});
    expect(unknown.status).toBe(404);
    expectDocumented('workflows.run', 404, unknown.response, unknown.body);
  });
});

describe('scripts over HTTP', () => {
  const source = 'const rows = getEntity("customers");\nwriteEntity("out", rows);\n';

  it('PUT stores text (201, then 200), GET gives the text back, list and DELETE work', async () => {
    const { engine, handler } = await setup();
    const put = await call(handler, 'PUT', '/scripts/copy%20rows.js', source, {
      'content-type': 'application/javascript',
    });
    expect(put.status).toBe(201);
    expect(put.body).toEqual({ name: 'copy rows.js' });
    expectDocumented('scripts.put', 201, put.response, put.body);
    const again = await call(handler, 'PUT', '/scripts/copy%20rows.js', source + '// v2\n', {
      'content-type': 'text/plain; charset=utf-8',
    });
    expect(again.status).toBe(200);
    expect(await engine.scripts.get('copy rows.js')).toBe(source + '// v2\n');
    const get = await call(handler, 'GET', '/scripts/copy%20rows.js');
    expect(get.status).toBe(200);
    expect(get.response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(get.text).toBe(source + '// v2\n');
    expectDocumented('scripts.get', 200, get.response, undefined);
    const list = await call(handler, 'GET', '/scripts');
    expect(list.body).toEqual(['copy rows.js']);
    expectDocumented('scripts.list', 200, list.response, list.body);
    expect((await call(handler, 'DELETE', '/scripts/copy%20rows.js')).status).toBe(204);
    const gone = await call(handler, 'GET', '/scripts/copy%20rows.js');
    expect(gone.status).toBe(404);
    expect((await call(handler, 'DELETE', '/scripts/copy%20rows.js')).status).toBe(404);
  });

  it('answers 415 for a JSON body and 400 for an invalid name', async () => {
    const { handler } = await setup();
    const json = await call(handler, 'PUT', '/scripts/a', { source });
    expect(json.status).toBe(415);
    expect(json.response.headers.get('accept')).toBe('text/plain');
    expectDocumented('scripts.put', 415, json.response, json.body);
    const bad = await call(handler, 'PUT', '/scripts/%20padded%20', source, { 'content-type': 'text/plain' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('name');
  });

  it('answers 201 for the first source stored under a name a trusted function is registered under', async () => {
    const { engine, handler } = await setup();
    engine.scripts.register('t.js', () => undefined);
    const first = await call(handler, 'PUT', '/scripts/t.js', source, { 'content-type': 'text/plain' });
    expect(first.status).toBe(201);
    const second = await call(handler, 'PUT', '/scripts/t.js', source, { 'content-type': 'text/plain' });
    expect(second.status).toBe(200);
  });

  it('answers 415 for a source in another charset than UTF-8, storing nothing; utf-8 and us-ascii pass', async () => {
    const { engine, handler } = await setup();
    const latin1 = await call(handler, 'PUT', '/scripts/a.js', '// café', {
      'content-type': 'text/plain; charset=iso-8859-1',
    });
    expect(latin1.status).toBe(415);
    expect(latin1.body.detail).toContain('charset=iso-8859-1');
    expect(await engine.scripts.list()).toEqual([]);
    const types = [
      'text/plain; charset=UTF-8',
      'text/javascript;charset="utf8"',
      'text/plain; charset=us-ascii',
    ];
    for (const [i, type] of types.entries())
      expect((await call(handler, 'PUT', `/scripts/s${i}.js`, source, { 'content-type': type })).status).toBe(
        201,
      );
  });

  it('answers 400 missing_body for an empty or absent body and stores nothing', async () => {
    const { engine, handler } = await setup();
    const empty = await call(handler, 'PUT', '/scripts/a.js', '', { 'content-type': 'text/plain' });
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: 'missing_body', errors: [{ code: 'required', path: '' }] });
    expectDocumented('scripts.put', 400, empty.response, empty.body);
    const none = await call(handler, 'PUT', '/scripts/a.js');
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('missing_body');
    const noType = await call(handler, 'PUT', '/scripts/a.js', source, { 'content-type': '' });
    expect(noType.status).toBe(415);
    expect(await engine.scripts.list()).toEqual([]);
  });
});

describe('applications over HTTP', () => {
  const app = {
    start_screen_url: 'home',
    screens: [
      {
        url: 'home',
        components: [
          [{ name: 'title', type: 'text', text: { contents: 'Customers', type: 'heading' } }],
          [{ name: 'grid', type: 'datagrid', datagrid: { entity_name: 'customers' } }],
        ],
      },
    ],
  };

  it('PUT stores (201, then 200), GET reads, list and DELETE work', async () => {
    const { handler } = await setup();
    const put = await call(handler, 'PUT', '/applications/back%20office', app);
    expect(put.status).toBe(201);
    expectDocumented('applications.put', 201, put.response, put.body);
    expect((await call(handler, 'PUT', '/applications/back%20office', app)).status).toBe(200);
    const get = await call(handler, 'GET', '/applications/back%20office');
    expect(get.status).toBe(200);
    expect(get.body.start_screen_url).toBe('home');
    expectDocumented('applications.get', 200, get.response, get.body);
    const list = await call(handler, 'GET', '/applications');
    expect(list.body).toEqual(['back office']);
    expectDocumented('applications.list', 200, list.response, list.body);
    expect((await call(handler, 'DELETE', '/applications/back%20office')).status).toBe(204);
    const gone = await call(handler, 'GET', '/applications/back%20office');
    expect(gone.status).toBe(404);
    expectDocumented('applications.get', 404, gone.response, gone.body);
    expect((await call(handler, 'DELETE', '/applications/back%20office')).status).toBe(404);
  });

  it('answers 400 with the path of every problem', async () => {
    const { handler } = await setup();
    const bad = await call(handler, 'PUT', '/applications/a', {
      ...app,
      screens: [
        {
          url: 'home',
          components: [
            [{ name: 'grid', type: 'datagrid', datagrid: { entity_name: 'ghost' } }],
            [
              {
                name: 'f',
                type: 'form',
                form: { form_items: [], job: { type: 'sync', workflow_name: 'nope' } },
              },
            ],
          ],
        },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual([
      'screens[0].components[0][0].datagrid.entity_name',
      'screens[0].components[1][0].form.job.workflow_name',
    ]);
    expectDocumented('applications.put', 400, bad.response, bad.body);
  });

  it('routes screens to the application runtime as HTML', async () => {
    const { handler } = await setup();
    await call(handler, 'PUT', '/applications/back%20office', app);
    const screen = await call(handler, 'GET', '/applications/back%20office/screens/home');
    expect(screen.status).toBe(200);
    expect(screen.response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(screen.text).toContain('Grace');
    expectDocumented('applications.renderScreen', 200, screen.response, undefined);
  });
});
