import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, ValidationError, type ApplicationBody } from '../../src/index.js';
import { customersEntity, shopSheets } from '../fixtures.js';
import { appEngine, shopApp } from './helpers.js';

type Json = Record<string, any>;

/** Stores `config` and returns the issues it was refused with. */
async function issuesOf(config: unknown) {
  const { engine } = await appEngine();
  const error = await engine.applications.put('bad', config as ApplicationBody).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues;
}

function startForm(app: Json): Json {
  return app.screens[0].components[1][0].form;
}

describe('application config validation', () => {
  it('stores the shop app and reads it back', async () => {
    const { engine } = await appEngine();
    expect(await engine.applications.list()).toEqual(['shop']);
    expect((await engine.applications.get('shop')).start_screen_url).toBe('start');
  });

  it('refuses a form naming an unknown workflow, with its path', async () => {
    const app = shopApp() as Json;
    startForm(app).job.workflow_name = 'nope';
    const issues = await issuesOf(app);
    expect(issues).toContainEqual(
      expect.objectContaining({
        code: 'unknown_workflow',
        path: 'screens[0].components[1][0].form.job.workflow_name',
      }),
    );
  });

  it('refuses a grid naming an unknown entity', async () => {
    const app = shopApp() as Json;
    app.screens[1].components[2][0].datagrid.entity_name = 'invoices';
    const issues = await issuesOf(app);
    expect(issues).toContainEqual(
      expect.objectContaining({
        code: 'unknown_entity',
        path: 'screens[1].components[2][0].datagrid.entity_name',
      }),
    );
  });

  it('refuses a form missing a required input named like an Object.prototype member', async () => {
    const { engine } = await appEngine();
    await engine.workflows.create({
      name: 'protoish',
      steps: [
        { name: 'a', type: 'l2', l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task' } },
      ],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: {
          type: 'object',
          properties: { toString: { type: 'string' }, note: { type: 'string' } },
          required: ['toString'],
        },
      },
    });
    const app = shopApp() as Json;
    startForm(app).job.workflow_name = 'protoish';
    startForm(app).form_items = [{ label: 'note', type: 'text' }];
    const error = await engine.applications.put('proto', app as ApplicationBody).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toContainEqual(
      expect.objectContaining({ code: 'missing_item', path: 'screens[0].components[1][0].form.form_items' }),
    );
  });

  it('refuses a form item that is not an input property of the workflow', async () => {
    const app = shopApp() as Json;
    startForm(app).form_items.push({ label: 'Colour', type: 'text' });
    const issues = await issuesOf(app);
    expect(issues).toContainEqual(
      expect.objectContaining({
        code: 'unknown_property',
        path: 'screens[0].components[1][0].form.form_items[1]',
      }),
    );
  });

  it.each(['toString', 'constructor', 'hasOwnProperty', '__proto__'])(
    'refuses an item named %s, an Object.prototype member that is no input property',
    async (name) => {
      const app = shopApp() as Json;
      startForm(app).form_items.push({ label: 'X', name, type: 'text' });
      const issues = await issuesOf(app);
      expect(issues).toContainEqual(
        expect.objectContaining({
          code: 'unknown_property',
          path: 'screens[0].components[1][0].form.form_items[1]',
          message: expect.stringContaining(
            `fills "${name}", which is not an input property of workflow "lookup"`,
          ),
        }),
      );
    },
  );

  it('refuses an item whose type does not fit the input property', async () => {
    const app = shopApp() as Json;
    startForm(app).form_items[0].type = 'date';
    const issues = await issuesOf(app);
    expect(issues).toContainEqual(
      expect.objectContaining({
        code: 'type_mismatch',
        path: 'screens[0].components[1][0].form.form_items[0].type',
      }),
    );
  });

  it('refuses a redirect to an unknown screen', async () => {
    const app = shopApp() as Json;
    startForm(app).do.redirect_data.url = '/screens/invoices?id={{output.count}}';
    const issues = await issuesOf(app);
    expect(issues).toContainEqual(
      expect.objectContaining({
        code: 'unknown_screen',
        path: 'screens[0].components[1][0].form.do.redirect_data.url',
      }),
    );
  });

  it.each([
    'https://evil.com/screens/orders',
    '//evil.com',
    '/screens/../x',
    'javascript:alert(1)',
    '/screens/orders#x',
    '/other/orders',
    '/screens/',
  ])('refuses a redirect outside the app: %s', async (url) => {
    const app = shopApp() as Json;
    app.screens[1].components[3][0].button.event.redirect_data.url = url;
    const issues = await issuesOf(app);
    expect(issues.some((i) => i.path === 'screens[1].components[3][0].button.event.redirect_data.url')).toBe(
      true,
    );
  });

  it('refuses {{output.x}} that the workflow does not output', async () => {
    const app = shopApp() as Json;
    startForm(app).do.redirect_data.url = '/screens/orders?c={{output.customer}}';
    const issues = await issuesOf(app);
    const issue = issues.find((i) => i.code === 'unknown_output');
    expect(issue?.path).toBe('screens[0].components[1][0].form.do.redirect_data.url');
    expect(issue?.message).toContain('customer_id, count');
  });

  it('refuses {{output.x}} in a button, which has no run', async () => {
    const app = shopApp() as Json;
    app.screens[1].components[3][0].button.event.redirect_data.url = '/screens/start?c={{output.count}}';
    const issues = await issuesOf(app);
    expect(issues).toContainEqual(
      expect.objectContaining({
        code: 'invalid_redirect',
        path: 'screens[1].components[3][0].button.event.redirect_data.url',
      }),
    );
  });

  it('lists every problem at once', async () => {
    const app = shopApp() as Json;
    startForm(app).job.workflow_name = 'nope';
    app.screens[1].components[2][0].datagrid.entity_name = 'invoices';
    const issues = await issuesOf(app);
    expect(issues.map((i) => i.code).sort()).toEqual(['unknown_entity', 'unknown_workflow']);
  });
});

describe('the grids of one screen', () => {
  it('may show at most 5,000 rows a view together, counted by their page_size (20 when not given)', async () => {
    const engine = new Engine({ spreadsheets: new MemorySpreadsheets(shopSheets()) });
    await engine.catalog.registerEntity(customersEntity);
    const grid = (i: number, page_size?: number) => ({
      name: `g${i}`,
      type: 'datagrid',
      datagrid: { entity_name: 'customers', ...(page_size === undefined ? {} : { page_size }) },
    });
    const app = (grids: object[]) =>
      ({
        start_screen_url: 'home',
        screens: [{ url: 'home', components: [grids] }],
      }) as ApplicationBody;
    const error = await engine.applications
      .put('big', app(Array.from({ length: 6 }, (_, i) => grid(i, 1000))))
      .catch((e: unknown) => e);
    expect((error as ValidationError).issues).toContainEqual({
      code: 'too_big',
      path: 'screens[0].components',
      message:
        'the datagrids of screen "home" show 6000 rows a view (their page_size, 20 when not given); at most 5000 are allowed',
    });
    const fine = [
      ...Array.from({ length: 4 }, (_, i) => grid(i, 1000)),
      ...Array.from({ length: 50 }, (_, i) => grid(i + 4)),
    ];
    expect((await engine.applications.put('fine', app(fine))).created).toBe(true);
  });
});
