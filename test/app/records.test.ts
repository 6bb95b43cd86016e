import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { handleScreenRoute } from '../../src/http/screens.js';
import {
  Engine,
  MemorySpreadsheets,
  ValidationError,
  renderScreen,
  type ApplicationBody,
  type ResolvedForm,
} from '../../src/index.js';
import { shopEngine } from '../engine/helpers.js';

/** Customers with an edit screen: one customer's form and orders, a delete form, an add form. */
function recordsApp(): ApplicationBody {
  const filter = (param: string) => ({
    filters: [
      {
        column: 'customer_id',
        operator: 'EQUALS' as const,
        value_type: 'NUMBER' as const,
        value: `{{query_params.${param}}}`,
      },
    ],
    order_by: [{ column: 'order_id', direction: 'DESC' as const }],
  });
  return {
    start_screen_url: 'customer',
    screens: [
      {
        url: 'customer',
        components: [
          [
            {
              name: 'edit',
              type: 'form',
              form: {
                form_items: [
                  { label: 'Name', name: 'name', type: 'text', required: true },
                  { label: 'City', name: 'city', type: 'text' },
                ],
                job: {
                  type: 'write',
                  entity_name: 'customers',
                  write_mode: 'update',
                  key: { id: '{{query_params.id}}' },
                },
                do: {
                  type: 'redirect',
                  redirect_data: { url: '/screens/customer?id={{output.id}}&saved={{output.written}}' },
                },
              },
            },
          ],
          [
            {
              name: 'orders',
              type: 'datagrid',
              datagrid: { entity_name: 'orders', page_size: 1, operation: filter('id') },
            },
          ],
          [
            {
              name: 'remove',
              type: 'form',
              form: {
                form_items: [],
                job: {
                  type: 'write',
                  entity_name: 'customers',
                  write_mode: 'delete',
                  key: { id: '{{query_params.id}}' },
                },
              },
            },
          ],
        ],
      },
      {
        url: 'orders',
        components: [
          [
            {
              name: 'add',
              type: 'form',
              form: {
                form_items: [
                  { label: 'Order', name: 'order_id', type: 'number' },
                  { label: 'Customer', name: 'customer_id', type: 'number', required: true },
                  { label: 'Amount', name: 'amount', type: 'number', number_config: { min: -5, step: 0.5 } },
                ],
                job: { type: 'write', entity_name: 'orders', write_mode: 'upsert' },
              },
            },
          ],
        ],
      },
    ],
  };
}

async function setUp() {
  const shop = await shopEngine();
  const orders = await shop.engine.catalog.getDefinition('orders');
  await shop.engine.catalog.upsertEntity({
    ...orders,
    columns: orders.columns.map((c) => (c.name === 'amount' ? { ...c, number: { min: 0, max: 1000 } } : c)),
  });
  await shop.engine.applications.put('crm', recordsApp());
  return { ...shop, app: await shop.engine.applications.open('crm') };
}

const formOf = (screen: { rows: { type: string; name: string }[][] }, name: string) =>
  screen.rows.flat().find((c) => c.type === 'form' && c.name === name) as ResolvedForm;

describe('a form that edits the row its address names', () => {
  it('shows the row, saves the changed cells only and redirects with the written row', async () => {
    const { app, spreadsheets } = await setUp();
    const edit = formOf(await app.screen('customer', { id: '2' }), 'edit');
    expect(edit.items.map((i) => [i.property, i.value])).toEqual([
      ['name', 'Grace'],
      ['city', 'New York'],
    ]);
    expect(edit.submitLabel).toBe('Save');
    const result = await app.submit(
      'customer',
      'edit',
      { name: 'Grace Hopper', city: 'Arlington' },
      { id: '2' },
    );
    expect(result).toMatchObject({ ok: true, redirect: '/screens/customer?id=2&saved=1', run: null });
    expect(spreadsheets.cells('shop', 'customers')![2]).toEqual([2, 'Grace Hopper', 'Arlington']);
  });

  it('writes nothing, and says so, once its entity has another primary key than the form was made for', async () => {
    const { app, engine, spreadsheets } = await setUp();
    const customers = await engine.catalog.getDefinition('customers');
    await engine.catalog.upsertEntity({ ...customers, primary_key: ['name'] });
    const before = spreadsheets.cells('shop', 'customers');
    const result = await app.submit('customer', 'edit', { name: 'Ada', city: 'Changed' }, { id: '2' });
    expect(result).toMatchObject({ ok: false, reason: 'failed', run: null });
    expect(!result.ok && result.errors[0]!.message).toContain('"id", which is not a primary-key column');
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
    const edit = formOf(await app.screen('customer', { id: '2' }), 'edit');
    expect(edit.error).toBe(
      'This form cannot be used: the records it edits have changed since the application was made.',
    );
    expect(edit.items.map((i) => i.value)).toEqual([null, null]);
  });

  it('empties a cell whose field was sent empty', async () => {
    const { app, spreadsheets } = await setUp();
    await app.submit('customer', 'edit', { name: 'Ada', city: '' }, { id: '1' });
    expect(spreadsheets.cells('shop', 'customers')![1]).toEqual([1, 'Ada', null]);
  });

  it('says so when the address names no row, or lacks the key; saving then changes nothing', async () => {
    const { app, spreadsheets } = await setUp();
    expect(formOf(await app.screen('customer', { id: '9' }), 'edit').error).toBe(
      'There is no "customers" row with id 9.',
    );
    expect(formOf(await app.screen('customer', {}), 'edit').error).toBe(
      'This form needs "id" in the address of the screen, and it is not there.',
    );
    // A key the number column cannot hold names no row either; no read error reaches the page.
    for (const id of ['abc', '', '1e400'])
      expect(formOf(await app.screen('customer', { id }), 'edit').error, id).toBe(
        `There is no "customers" row with id ${id}.`,
      );
    const before = spreadsheets.cells('shop', 'customers');
    const result = await app.submit('customer', 'edit', { name: 'Nobody' }, { id: '9' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('invalid');
    expect(result.errors[0]).toMatchObject({ code: 'missing_key', path: '' });
    expect(formOf(result.screen, 'edit').error).toContain('(id=9), which no row of "customers" holds');
    expect(formOf(result.screen, 'edit').items[0]!.value).toBe('Nobody');
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });

  it('deletes the row, and refuses while orders reference it', async () => {
    const { app, engine } = await setUp();
    const referenced = await app.submit('customer', 'remove', {}, { id: '3' });
    expect(referenced.ok).toBe(false);
    if (!referenced.ok)
      expect(formOf(referenced.screen, 'remove').error).toContain('"orders" (order_id=13) references it');
    expect(formOf(await app.screen('customer', { id: '3' }), 'remove').submitLabel).toBe('Delete');
    await engine.catalog.delete('orders', [{ order_id: 13 }]);
    expect((await app.submit('customer', 'remove', {}, { id: '3' })).ok).toBe(true);
    const left = await engine.catalog.getEntity({ entity_name: 'customers', operation: {} });
    expect(left.body.table.rows!.map((r) => r[0])).toEqual([1, 2]);
  });

  it('a double click on Delete deletes once, and both answers redirect to the same place', async () => {
    const { engine, app, spreadsheets } = await setUp();
    await engine.catalog.delete('orders', [{ order_id: 13 }]);
    const remove = formOf(await app.screen('customer', { id: '3' }), 'remove');
    expect(remove.submission).toMatch(/^[0-9a-f-]{36}$/);
    const post = (token: string) =>
      handleScreenRoute(
        engine,
        new Request('http://localhost/applications/crm/screens/customer/forms/remove?id=3', {
          method: 'POST',
          body: `_submission=${token}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        { app: 'crm', screen: 'customer', form: 'remove' },
      );
    const [first, second] = await Promise.all([post(remove.submission!), post(remove.submission!)]);
    const third = await post(remove.submission!);
    for (const answer of [first, second, third]) {
      expect(answer.status).toBe(303);
      expect(answer.headers.get('location')).toBe('/applications/crm/screens/customer?id=3');
    }
    expect(spreadsheets.cells('shop', 'customers')!.map((r) => r[0])).toEqual(['id', 1, 2]);
    // A new render has a new token: deleting the key again says that no row holds it.
    const again = formOf(await app.screen('customer', { id: '3' }), 'remove');
    expect(again.submission).not.toBe(remove.submission);
    const gone = await post(again.submission!);
    expect(gone.status).toBe(422);
    expect(await gone.text()).toContain('which no row of &quot;customers&quot; holds');
  });
});

describe('column rules of the entity on a form', () => {
  it('are shown with the field: key columns required, number min, max and step (the stricter wins)', async () => {
    const { app } = await setUp();
    const add = formOf(await app.screen('orders'), 'add');
    expect(add.items.map((i) => [i.property, i.required, i.numberConfig])).toEqual([
      ['order_id', true, null],
      ['customer_id', true, null],
      ['amount', false, { min: 0, max: 1000, step: 0.5 }],
    ]);
    const html = renderScreen('crm', await app.screen('orders'));
    expect(html).toContain(
      'name="amount" min="0" max="1000" step="0.5" aria-describedby="f-add-2-hint"><p class="field-hint" id="f-add-2-hint">From 0 to 1000, in steps of 0.5.</p>',
    );
  });

  it('are enforced on the server, the error next to the field; a foreign key names the other entity', async () => {
    const { app, spreadsheets } = await setUp();
    const before = spreadsheets.cells('shop', 'orders');
    const tooSmall = await app.submit('orders', 'add', { order_id: '20', customer_id: '1', amount: '-1' });
    expect(tooSmall.ok).toBe(false);
    if (!tooSmall.ok) {
      expect(tooSmall.errors).toEqual([
        { code: 'too_small', path: 'amount', message: 'Amount must be at least 0' },
      ]);
      expect(formOf(tooSmall.screen, 'add').items[2]!.error).toBe('Amount must be at least 0');
    }
    const noKey = await app.submit('orders', 'add', { order_id: '', customer_id: '1' });
    expect(noKey.ok || noKey.errors).toEqual([
      { code: 'required', path: 'order_id', message: 'Order is required' },
    ]);
    const orphan = await app.submit('orders', 'add', { order_id: '20', customer_id: '8', amount: '1' });
    expect(orphan.ok || formOf(orphan.screen, 'add').error).toContain('matches no row of "customers"');
    expect(spreadsheets.cells('shop', 'orders')).toEqual(before);
    expect((await app.submit('orders', 'add', { order_id: '20', customer_id: '1', amount: '2.5' })).ok).toBe(
      true,
    );
  });
});

describe('a grid with an operation', () => {
  it("shows only the rows its filters pick, taking values from the screen's address, and pages them", async () => {
    const { app } = await setUp();
    const grid = (await app.screen('customer', { id: '1' })).rows[1]![0]!;
    expect(grid).toMatchObject({ type: 'datagrid', rows: [[11, 1, 'Desk', 150.5]], hasNext: true });
    expect(grid.type === 'datagrid' && grid.nextHref).toBe('/screens/customer?id=1&orders_page=2');
    const second = (await app.screen('customer', { id: '1', orders_page: '2' })).rows[1]![0]!;
    expect(second).toMatchObject({ rows: [[10, 1, 'Lamp', 25]], hasNext: false });
    const none = (await app.screen('customer', {})).rows[1]![0]!;
    expect(none).toMatchObject({
      rows: [],
      error: 'This list needs "id" in the address of the screen, and it is not there.',
    });
    // A value the column cannot hold: a plain sentence, not the read's words about value_type.
    const wrong = (await app.screen('customer', { id: 'abc' })).rows[1]![0]!;
    expect(wrong).toMatchObject({
      rows: [],
      error: 'This list cannot be shown for the values in the address of the screen.',
    });
  });
});

describe('errors of a column whose name needs quoting in a path', () => {
  it('show next to its item, worded with its label', async () => {
    const spreadsheets = new MemorySpreadsheets({
      s: {
        t: [
          ['id', 'Unit price (EUR.)', 'Say "when"'],
          [1, 5, '2024-01-01'],
        ],
      },
    });
    const engine = new Engine({ spreadsheets });
    await engine.catalog.registerEntity({
      name: 't',
      description: '',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'Unit price (EUR.)', type: 'NUMBER', number: { min: 0 } },
        { name: 'Say "when"', type: 'DATE' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 's', sheet_name: 't', origin: { row: 0, col: 0 } },
    });
    await engine.applications.put('a', {
      start_screen_url: 'e',
      screens: [
        {
          url: 'e',
          components: [
            [
              {
                name: 'f',
                type: 'form',
                form: {
                  form_items: [
                    { label: 'Unit price (EUR.)', type: 'number' },
                    { label: 'Say "when"', type: 'text' },
                  ],
                  job: {
                    type: 'write',
                    entity_name: 't',
                    write_mode: 'update',
                    key: { id: '{{query_params.id}}' },
                  },
                },
              },
            ],
          ],
        },
      ],
    });
    const app = await engine.applications.open('a');
    const cases: [Record<string, string>, (string | null)[]][] = [
      [{ 'Unit price (EUR.)': '-1' }, ['Unit price (EUR.) must be at least 0', null]],
      [{ 'Unit price (EUR.)': 'x' }, ['Unit price (EUR.) must be a number, got "x"', null]],
      [{ 'Say "when"': 'soon' }, [null, 'Say "when" must be DATE, got "soon"']],
    ];
    for (const [values, errors] of cases) {
      const result = await app.submit('e', 'f', values, { id: '1' });
      expect(result.ok, JSON.stringify(values)).toBe(false);
      if (result.ok) continue;
      const form = formOf(result.screen, 'f');
      expect(form.items.map((i) => i.error)).toEqual(errors);
      expect(form.error).toBeNull();
    }
    expect(spreadsheets.cells('s', 't')).toEqual([
      ['id', 'Unit price (EUR.)', 'Say "when"'],
      [1, 5, '2024-01-01'],
    ]);
  });
});

describe('the HTML route', () => {
  it('saves a form with 303 and answers 422 with the errors next to the form', async () => {
    const { engine, spreadsheets } = await setUp();
    const post = (id: string, body: string) =>
      handleScreenRoute(
        engine,
        new Request(`http://localhost/applications/crm/screens/customer/forms/edit?id=${id}`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        { app: 'crm', screen: 'customer', form: 'edit' },
      );
    const saved = await post('1', 'name=Ada+L.&city=Oxford');
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe('/applications/crm/screens/customer?id=1&saved=1');
    expect(spreadsheets.cells('shop', 'customers')![1]).toEqual([1, 'Ada L.', 'Oxford']);
    const missing = await post('9', 'name=X');
    expect(missing.status).toBe(422);
    expect(await missing.text()).toContain('which no row of &quot;customers&quot; holds');
  });
});

describe('checking the config when it is stored', () => {
  const put = async (change: (app: ReturnType<typeof recordsApp>) => void) => {
    const { engine } = await setUp();
    const config = recordsApp();
    change(config);
    const error = await engine.applications.put('bad', config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((i) => `${i.path}: ${i.message}`);
  };
  const edit = (app: ReturnType<typeof recordsApp>) => app.screens[0]!.components[0]![0]! as any;
  const grid = (app: ReturnType<typeof recordsApp>) => app.screens[0]!.components[1]![0]! as any;

  it('refuses items that fill no column, of the wrong type, or the key the address gives', async () => {
    expect(
      await put((app) => {
        edit(app).form.form_items.push({ label: 'Age', name: 'age', type: 'number' });
        edit(app).form.form_items.push({ label: 'Id', name: 'id', type: 'number' });
        edit(app).form.form_items[1].type = 'number';
      }),
    ).toEqual([
      'screens[0].components[0][0].form.form_items[1].type: form item "City" is of type number, but column "city" is STRING',
      'screens[0].components[0][0].form.form_items[2]: form "edit" item "Age" fills "age", which is not a column of entity "customers" (columns: id, name, city)',
      'screens[0].components[0][0].form.form_items[3]: form "edit" item "Id" fills key column "id", which the job\'s key takes from the screen\'s address; remove the item',
    ]);
  });

  it('refuses a key that misses a key column or names another, and placeholders other than query_params', async () => {
    expect(
      await put((app) => {
        edit(app).form.job.key = { name: '{{output.name}}' };
      }),
    ).toEqual([
      'screens[0].components[0][0].form.job.key.name: {{output.name}} is not allowed here; only {{query_params.<name>}}',
    ]);
    expect(
      await put((app) => {
        edit(app).form.job.key = { name: '{{query_params.name}}' };
      }),
    ).toEqual([
      'screens[0].components[0][0].form.form_items[0]: form "edit" item "Name" fills key column "name", which the job\'s key takes from the screen\'s address; remove the item',
      'screens[0].components[0][0].form.job.key.name: form "edit" key names "name", which is not a primary-key column of "customers" (id)',
      'screens[0].components[0][0].form.job.key: form "edit" writes "customers" by its key, but nothing fills key column "id": add an item for it, or name it in the job\'s key',
      // With nothing filling "id", the written row has no id for the redirect either.
      'screens[0].components[0][0].form.do.redirect_data.url: redirect uses {{output.id}}, but form "edit" outputs only the row it writes (name, city) and written',
    ]);
  });

  it('refuses a redirect {{output.x}} that no item, key column or `written` fills, with 400 over HTTP', async () => {
    expect(
      await put((app) => {
        edit(app).form.form_items.pop();
        edit(app).form.do.redirect_data.url =
          '/screens/customer?id={{output.id}}&n={{output.name}}&w={{output.written}}&c={{output.city}}';
        const add = (app.screens[1]!.components[0]![0]! as any).form;
        add.do = {
          type: 'redirect',
          redirect_data: { url: '/screens/orders?o={{output.order_id}}&i={{output.item}}' },
        };
      }),
    ).toEqual([
      'screens[0].components[0][0].form.do.redirect_data.url: redirect uses {{output.city}}, but form "edit" outputs only the row it writes (name, id) and written',
      'screens[1].components[0][0].form.do.redirect_data.url: redirect uses {{output.item}}, but form "add" outputs only the row it writes (order_id, customer_id, amount) and written',
    ]);
    const { engine } = await setUp();
    const config = recordsApp();
    edit(config).form.do.redirect_data.url = '/screens/customer?c={{output.city}}&x={{output.nope}}';
    edit(config).form.form_items.pop();
    const response = await createHandler(engine)(
      new Request('http://localhost/applications/bad', {
        method: 'PUT',
        body: JSON.stringify(config),
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { errors: { path: string; message: string }[] };
    expect(problem.errors.map((e) => e.path)).toEqual([
      'screens[0].components[0][0].form.do.redirect_data.url',
      'screens[0].components[0][0].form.do.redirect_data.url',
    ]);
    expect(problem.errors.map((e) => e.message).join(' ')).toMatch(
      /\{\{output\.city\}\}.*\{\{output\.nope\}\}/,
    );
    await expect(engine.applications.get('bad')).rejects.toThrow();
  });

  it('refuses a redirect {{output.x}} an optional item fills: the row would be written, then the redirect fail', async () => {
    expect(
      await put((app) => {
        edit(app).form.do.redirect_data.url = '/screens/customer?id={{output.id}}&c={{output.city}}';
      }),
    ).toEqual([
      'screens[0].components[0][0].form.do.redirect_data.url: redirect uses {{output.city}}, which item "City" may leave empty, so the row would be written and the redirect fail: make the item required',
    ]);
    // Required, it is always there.
    const { engine } = await setUp();
    const config = recordsApp();
    edit(config).form.do.redirect_data.url = '/screens/customer?id={{output.id}}&c={{output.city}}';
    edit(config).form.form_items[1]!.required = true;
    await engine.applications.put('fine', config);
  });

  it('refuses an unknown entity, a redirect output that is no column, and a grid naming unknown columns', async () => {
    expect(
      await put((app) => {
        edit(app).form.do.redirect_data.url = '/screens/customer?x={{output.nope}}';
        grid(app).datagrid.operation.order_by[0].column = 'when';
        (app.screens[1]!.components[0]![0]! as any).form.job.entity_name = 'ghosts';
      }),
    ).toEqual([
      'screens[0].components[0][0].form.do.redirect_data.url: redirect uses {{output.nope}}, but form "edit" outputs only the row it writes (name, city, id) and written',
      'screens[0].components[1][0].datagrid.operation.order_by[0].column: grid "orders" names column "when", which entity "orders" does not have (columns: order_id, customer_id, item, amount)',
      'screens[1].components[0][0].form.job.entity_name: form "add" writes entity "ghosts", which does not exist',
    ]);
  });
});
