import { describe, expect, it } from 'vitest';
import {
  AppRuntime,
  NotFoundError,
  StepwireError,
  type Application,
  type Component,
  type ResolvedDatagrid,
  type ResolvedForm,
  type ResolvedScreen,
} from '../../src/index.js';
import { appEngine } from './helpers.js';

async function shop() {
  const { engine } = await appEngine();
  return { engine, app: await engine.applications.open('shop') };
}

function component<T extends ResolvedScreen['rows'][number][number]['type']>(
  screen: ResolvedScreen,
  type: T,
  name?: string,
) {
  const found = screen.rows.flat().find((c) => c.type === type && (name === undefined || c.name === name));
  if (!found) throw new Error(`no ${type} ${name ?? ''}`);
  return found as Extract<ResolvedScreen['rows'][number][number], { type: T }>;
}

describe('screens', () => {
  it('resolves the start screen: heading and form items', async () => {
    const { app } = await shop();
    const screen = await app.screen('start');
    expect(screen.startUrl).toBe('start');
    expect(component(screen, 'text')).toMatchObject({ heading: true, contents: 'Find orders' });
    const form = component(screen, 'form');
    expect(form.workflow).toBe('lookup');
    expect(form.items).toEqual([
      {
        label: 'Customer',
        property: 'customer_id',
        type: 'number',
        required: true,
        // The workflow's input schema says customer_id is at least 1: the form shows it.
        numberConfig: { min: 1 },
        value: null,
        error: null,
        help: null,
        options: null,
        search: null,
        notice: null,
        rules: { minLength: null, maxLength: null, pattern: null, format: null, checks: [] },
      },
    ]);
  });

  it('fills {{query_params.x}} into texts and leaves a missing one empty', async () => {
    const { app } = await shop();
    const screen = await app.screen('orders', new URLSearchParams('customer=7'));
    expect(component(screen, 'text', 'title').contents).toBe('Orders of customer 7');
    expect(component(screen, 'text', 'count').contents).toBe(' orders found');
  });

  it('pages a grid: 45 rows, 20 per page, page from <name>_page', async () => {
    const { app } = await shop();
    const first = component(await app.screen('orders', { customer: '1' }), 'datagrid');
    expect(first).toMatchObject({
      page: 1,
      pageSize: 20,
      hasPrevious: false,
      hasNext: true,
      previousHref: null,
      nextHref: '/screens/orders?customer=1&grid_page=2',
    });
    expect(first.rows).toHaveLength(20);
    expect(first.columns.map((c) => c.name)).toEqual(['order_id', 'customer_id', 'item', 'amount']);
    const second = component(await app.screen('orders', { customer: '1', grid_page: '2' }), 'datagrid');
    expect(second.rows[0]![0]).toBe(21);
    expect(second).toMatchObject({
      hasPrevious: true,
      hasNext: true,
      previousHref: '/screens/orders?customer=1',
    });
    const third = component(await app.screen('orders', { grid_page: '3' }), 'datagrid');
    expect(third.rows.map((r) => r[0])).toEqual([41, 42, 43, 44, 45]);
    expect(third.hasNext).toBe(false);
  });

  it('knows there is no next page when the last page is exactly full', async () => {
    const { app } = await shop();
    // notes: 3 rows, 2 per page
    const page1 = component(await app.screen('notes', {}), 'datagrid');
    const page2 = component(await app.screen('notes', { grid_page: '2' }), 'datagrid');
    expect([page1.hasNext, page2.hasNext, page2.rows.length]).toEqual([true, false, 1]);
  });

  it.each(['0', '-1', 'abc', '1e3', '', '1000001', '9999999', '10000000'])(
    'reads a bad page number %j as page 1',
    async (page) => {
      const { app } = await shop();
      const grid: ResolvedDatagrid = component(await app.screen('orders', { grid_page: page }), 'datagrid');
      expect(grid.page).toBe(1);
      expect(grid.rows[0]![0]).toBe(1);
    },
  );

  it('reads page 1,000,000, the highest, as asked', async () => {
    const { app } = await shop();
    const grid = component(await app.screen('orders', { grid_page: '1000000' }), 'datagrid');
    expect(grid).toMatchObject({ page: 1_000_000, rows: [], hasNext: false });
  });

  it('resolves a button with the query parameter URL-encoded', async () => {
    const { app } = await shop();
    const screen = await app.screen('notes', { who: 'a&b=c #d' });
    expect(component(screen, 'button').href).toBe('/screens/notes?who=a%26b%3Dc%20%23d');
    expect(await app.button('notes', 'who', { who: 'x/y' })).toBe('/screens/notes?who=x%2Fy');
  });

  it('throws NotFoundError for an unknown screen, form or button', async () => {
    const { app, engine } = await shop();
    await expect(app.screen('nope')).rejects.toBeInstanceOf(NotFoundError);
    await expect(app.screen('..')).rejects.toBeInstanceOf(NotFoundError);
    await expect(app.submit('start', 'title', {})).rejects.toBeInstanceOf(NotFoundError);
    await expect(app.button('start', 'lookup')).rejects.toBeInstanceOf(NotFoundError);
    await expect(engine.applications.open('nope')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('form submission', () => {
  it('coerces the number, runs the workflow and builds the redirect from its output', async () => {
    const { app } = await shop();
    const result = await app.submit('start', 'lookup', { customer_id: ' 2 ' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.redirect).toBe('/screens/orders?customer=2&count=15');
    expect(result.run!.input).toEqual({ customer_id: 2 });
  });

  it('takes the posted form as a URLSearchParams, a name sent twice by its first value', async () => {
    const { app } = await shop();
    const result = await app.submit('start', 'lookup', new URLSearchParams('customer_id=2&customer_id=3'));
    expect(result.ok && result.redirect).toBe('/screens/orders?customer=2&count=15');
  });

  it('refuses values, a query or options that are no object with a TypeError naming the argument', async () => {
    const { app, engine } = await shop();
    const bad = app as unknown as {
      submit(...args: unknown[]): Promise<unknown>;
      screen(...args: unknown[]): Promise<unknown>;
    };
    await expect(bad.submit('start', 'lookup', null)).rejects.toThrow(
      new TypeError('app.submit: values must be an object of strings or a URLSearchParams; got null'),
    );
    await expect(bad.submit('start', 'lookup')).rejects.toThrow(/app\.submit: values .* got nothing/);
    await expect(bad.submit('start', 'lookup', {}, 'customer=1')).rejects.toThrow(
      /app\.submit: query must be .* got the string "customer=1"/,
    );
    await expect(bad.submit('start', 'lookup', { customer_id: '2' }, {}, null)).rejects.toThrow(
      /app\.submit: options must be an object/,
    );
    await expect(bad.screen('start', null)).rejects.toThrow(/app\.screen: query must be .* got null/);
    expect((await engine.listRuns()).runs).toEqual([]);
  });

  it('rejects "abc" for a number item, with the error on that item, and runs nothing', async () => {
    const { app, engine } = await shop();
    const result = await app.submit('start', 'lookup', { customer_id: 'abc' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('invalid');
    expect(result.run).toBeNull();
    expect(result.errors).toEqual([expect.objectContaining({ code: 'invalid_number', path: 'customer_id' })]);
    const form = component(result.screen, 'form');
    expect(form.items[0]).toMatchObject({ value: 'abc', error: 'Customer must be a number, got "abc"' });
    expect((await engine.options.storage.list('runs')).length).toBe(0);
  });

  it('puts a workflow input error (minimum) on the item whose property it names', async () => {
    const { app } = await shop();
    const result = await app.submit('start', 'lookup', { customer_id: '0' });
    if (result.ok) throw new Error('expected a failure');
    expect(result.reason).toBe('invalid');
    expect(result.errors[0]!.path).toBe('customer_id');
    const form = component(result.screen, 'form');
    expect(form.items[0]!.error).toBe('Customer must be at least 1, got 0');
    expect(form.error).toBeNull();
  });

  it('requires a required item and leaves an empty optional one out of the input', async () => {
    const { app } = await shop();
    const missing = await app.submit('notes', 'add', { note: '  ', amount: '' });
    if (missing.ok) throw new Error('expected a failure');
    expect(missing.errors.map((e) => [e.path, e.code])).toEqual([
      ['note', 'required'],
      ['amount', 'required'],
    ]);
    const ok = await app.submit('notes', 'add', { note: 'hi', amount: '2.5', due: '', comment: '' });
    if (!ok.ok) throw new Error(JSON.stringify(ok.errors));
    expect(ok.run!.input).toEqual({ note: 'hi', amount: 2.5, paid: false });
  });

  it('coerces booleans, dates and keeps to number_config', async () => {
    const { app } = await shop();
    const ok = await app.submit('notes', 'add', { note: 'x', amount: '10.5', paid: 'on', due: '2024-02-29' });
    if (!ok.ok) throw new Error(JSON.stringify(ok.errors));
    expect(ok.run!.input).toEqual({ note: 'x', amount: 10.5, paid: true, due: '2024-02-29' });
    const bad = await app.submit('notes', 'add', {
      note: 'x',
      amount: '10.25',
      paid: 'maybe',
      due: '2023-02-29',
    });
    if (bad.ok) throw new Error('expected a failure');
    expect(bad.errors.map((e) => e.code)).toEqual(['invalid_step', 'invalid_boolean', 'invalid_date']);
    const big = await app.submit('notes', 'add', { note: 'x', amount: '1001' });
    expect(!big.ok && big.errors[0]!.code).toBe('too_big');
    const small = await app.submit('notes', 'add', { note: 'x', amount: '-1' });
    expect(!small.ok && small.errors[0]!.code).toBe('too_small');
  });

  it("attaches a failed workflow's error to the form", async () => {
    const { app } = await shop();
    const result = await app.submit('notes', 'boom', { n: '1' });
    if (result.ok) throw new Error('expected a failure');
    expect(result.reason).toBe('failed');
    expect(result.run?.status).toBe('failed');
    const form: ResolvedForm = component(result.screen, 'form', 'boom');
    // The person sees a plain sentence with the run id; the details stay in the result and the record.
    expect(form.error).toBe(
      `Something went wrong while processing this form. Reference: run ${result.run!.id}.`,
    );
    expect(form.error).not.toContain('ledger');
    expect(result.errors[0]!.message).toContain('the ledger is locked');
    expect(result.run?.error?.message).toContain('the ledger is locked');
    expect(form.items[0]).toMatchObject({ value: '1', error: null });
    // other forms on the screen are not touched
    expect(component(result.screen, 'form', 'add').error).toBeNull();
  });

  it('URL-encodes every value placed in the redirect, and fills a missing query param as empty', async () => {
    const { app } = await shop();
    const result = await app.submit(
      'notes',
      'add',
      { note: 'a&b=1#x/../?é', amount: '1' },
      { who: 'Zoë & co' },
    );
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.redirect).toBe(
      '/screens/notes?who=a%26b%3D1%23x%2F..%2F%3F%C3%A9&from=Zo%C3%AB%20%26%20co',
    );
    const noQuery = await app.submit('notes', 'add', { note: 'n', amount: '1' });
    expect(noQuery.ok && noQuery.redirect).toBe('/screens/notes?who=n&from=');
  });

  it('without `do`, redirects back to the same screen with its query', async () => {
    const { app } = await shop();
    const result = await app.submit('notes', 'again', { note: 'n', amount: '1' }, { who: 'me' });
    expect(result.ok && result.redirect).toBe('/screens/notes?who=me');
  });

  it('a missing {{output.x}} is an error on the form, never a half-built URL', async () => {
    const { app } = await shop();
    const result = await app.submit('notes', 'extra', { note: 'n', amount: '1' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('redirect');
    expect(result.run?.status).toBe('succeeded');
    expect(component(result.screen, 'form', 'extra').error).toBe(
      `Something went wrong while processing this form. Reference: run ${result.run!.id}.`,
    );
    expect(result.errors[0]!.message).toMatch(/output has no "extra"/);
  });
});

describe('items whose property needs quoting in a path', () => {
  it('get their errors next to them, worded with their label', async () => {
    const { engine } = await appEngine();
    await engine.workflows.create({
      name: 'dotted',
      steps: [
        { name: 'd', type: 'l2', l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task' } },
      ],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: {
          type: 'object',
          properties: {
            'No. of items': { type: 'number', maximum: 10 },
            'Ship by "approx."': { type: 'string', minLength: 12 },
          },
          required: ['No. of items'],
        },
      },
    });
    const form: Component = {
      name: 'f',
      type: 'form',
      form: {
        form_items: [
          { label: 'No. of items', type: 'number', required: true },
          { label: 'Ship by "approx."', type: 'date' },
        ],
        job: { type: 'sync', workflow_name: 'dotted' },
      },
    };
    await engine.applications.put('sp', {
      start_screen_url: 's',
      screens: [{ url: 's', components: [[form]] }],
    });
    const app = await engine.applications.open('sp');
    const cases: [Record<string, string>, (string | null)[]][] = [
      [{ 'No. of items': 'abc' }, ['No. of items must be a number, got "abc"', null]],
      [{ 'No. of items': '' }, ['No. of items is required', null]],
      [
        { 'No. of items': '1', 'Ship by "approx."': '2024-02-30' },
        [null, 'Ship by "approx." must be a date written YYYY-MM-DD, got "2024-02-30"'],
      ],
      [{ 'No. of items': '50' }, ['No. of items must be at most 10, got 50', null]],
      [
        { 'No. of items': '5', 'Ship by "approx."': '2024-02-03' },
        [null, expect.stringMatching(/^Ship by "approx\." /)],
      ],
    ];
    for (const [values, errors] of cases) {
      const result = await app.submit('s', 'f', values);
      expect(result.ok, JSON.stringify(values)).toBe(false);
      if (result.ok) continue;
      const shown = component(result.screen, 'form', 'f');
      expect(
        shown.items.map((i) => i.error),
        JSON.stringify(values),
      ).toEqual(errors);
      expect(shown.error).toBeNull();
    }
  });
});

describe('redirects of a config that skipped validation', () => {
  it.each([
    '//evil.com',
    'https://evil.com',
    '/screens/../x',
    'javascript:alert(1)',
    '/screens/..',
    '/screens/nope',
  ])('refuses %s instead of building a link', async (url) => {
    const { engine } = await appEngine();
    const application: Application = {
      start_screen_url: 'start',
      screens: [
        {
          url: 'start',
          components: [
            [
              {
                name: 'go',
                type: 'button',
                button: { label: 'Go', event: { type: 'redirect', redirect_data: { url } } },
              },
            ],
          ],
        },
        { url: '..', components: [] },
      ],
    };
    const app = new AppRuntime(engine, 'raw', application);
    await expect(app.button('start', 'go')).rejects.toBeInstanceOf(StepwireError);
    await expect(app.screen('start')).rejects.toThrow(/redirect url/);
    await expect(app.screen('..')).rejects.toBeInstanceOf(NotFoundError);
  });
});
