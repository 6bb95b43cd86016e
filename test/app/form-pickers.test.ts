// Form pickers: a `ref` item lists the rows of another entity (a select when small, a search box
// when large), a `select` its options; `textarea` and `checkbox` items. Values are checked on the
// server, pickers read as the viewer, and every label and value is escaped.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHandler } from '../../src/http/index.js';
import {
  Engine,
  MemorySpreadsheets,
  ValidationError,
  renderScreen,
  type AccessPolicy,
  type ApplicationBody,
  type CellValue,
  type Entity,
  type Principal,
  type ResolvedForm,
  type ResolvedScreen,
  type Workflow,
} from '../../src/index.js';

const HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>';

const customers: Entity = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'owner', type: 'STRING' },
    { name: 'secret', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

/** 250 people: more than a select lists, so their picker is a search box. */
const people: Entity = {
  name: 'people',
  columns: [
    { name: 'code', type: 'STRING' },
    { name: 'name', type: 'STRING' },
  ],
  primary_key: ['code'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'people', origin: { row: 0, col: 0 } },
};

const orders: Entity = {
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'note', type: 'STRING' },
    { name: 'rush', type: 'BOOLEAN' },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

/** Echoes what the form sent. */
const pick: Workflow = {
  name: 'pick',
  steps: [
    {
      name: 'echo',
      type: 'l2',
      l2_data: {
        provider: 'test',
        module: 'app',
        action: 'echo',
        input_data: { customer: '{{input.customer}}' },
      },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: {
        customer: { type: 'integer' },
        person: { type: 'string' },
        size: { type: 'string' },
        count: { type: 'number' },
        remarks: { type: 'string' },
        urgent: { type: 'boolean' },
      },
    },
  },
  workflow_output: { name: 'output', output_data: { customer: '{{echo.customer}}' } },
};

function app(): ApplicationBody {
  return {
    start_screen_url: 'start',
    screens: [
      {
        url: 'start',
        components: [
          [
            {
              name: 'f',
              type: 'form',
              form: {
                form_items: [
                  {
                    label: 'Customer',
                    name: 'customer',
                    type: 'ref',
                    ref: { entity: 'customers', label_column: 'name', value_column: 'id' },
                    help: 'The customer who ordered.',
                  },
                  {
                    label: 'Person',
                    name: 'person',
                    type: 'ref',
                    ref: { entity: 'people', label_column: 'name', value_column: 'code' },
                  },
                  {
                    label: 'Size',
                    name: 'size',
                    type: 'select',
                    options: [
                      { value: 's', label: 'Small' },
                      { value: 'm', label: 'Medium' },
                      { value: HOSTILE, label: HOSTILE },
                    ],
                  },
                  {
                    label: 'Count',
                    name: 'count',
                    type: 'select',
                    options: [{ value: '1' }, { value: '2' }],
                  },
                  { label: 'Remarks', name: 'remarks', type: 'textarea' },
                  { label: 'Urgent', name: 'urgent', type: 'checkbox' },
                ],
                job: { type: 'sync', workflow_name: 'pick' },
              },
            },
          ],
          [
            {
              name: 'add',
              type: 'form',
              form: {
                form_items: [
                  { label: 'Order', name: 'order_id', type: 'number' },
                  {
                    label: 'Customer',
                    name: 'customer_id',
                    type: 'ref',
                    required: true,
                    ref: { entity: 'customers', label_column: 'name', value_column: 'id' },
                  },
                  { label: 'Note', name: 'note', type: 'textarea' },
                  { label: 'Rush', name: 'rush', type: 'checkbox' },
                ],
                job: { type: 'write', entity_name: 'orders', write_mode: 'append' },
              },
            },
          ],
        ],
      },
    ],
  };
}

async function setUp(access?: AccessPolicy) {
  const peopleCells: CellValue[][] = [['code', 'name']];
  for (let i = 1; i <= 250; i++) peopleCells.push([`p${i}`, `Person ${String(i).padStart(3, '0')}`]);
  const spreadsheets = new MemorySpreadsheets({
    shop: {
      customers: [
        ['id', 'name', 'owner', 'secret'],
        [1, 'Zoe', 'ann', 'x'],
        [2, 'Ada', 'bob', 'y'],
        [3, HOSTILE, 'ann', 'z'],
      ],
      people: peopleCells,
      orders: [['order_id', 'customer_id', 'note', 'rush']],
    },
  });
  const engine = new Engine({ spreadsheets, ...(access ? { access } : {}) });
  engine.actions.register({
    provider: 'test',
    module: 'app',
    action: 'echo',
    input: z.looseObject({}),
    run: (input) => input,
  });
  for (const entity of [customers, people, orders]) await engine.catalog.registerEntity(entity);
  await engine.workflows.create(pick);
  await engine.applications.put('shop', app());
  return { engine, spreadsheets };
}

function formOf(screen: ResolvedScreen, name: string): ResolvedForm {
  const found = screen.rows.flat().find((c) => c.type === 'form' && c.name === name);
  if (!found) throw new Error(`no form ${name}`);
  return found as ResolvedForm;
}

const item = (form: ResolvedForm, property: string) => form.items.find((i) => i.property === property)!;

describe('a ref item over a small entity', () => {
  it('is a select of its rows, shown by label (in label order), sending the value column', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const screen = await shop.screen('start');
    const customer = item(formOf(screen, 'f'), 'customer');
    expect(customer.options).toEqual([
      { value: '3', label: HOSTILE },
      { value: '2', label: 'Ada' },
      { value: '1', label: 'Zoe' },
    ]);
    expect(customer.search).toBeNull();
    const html = renderScreen('shop', screen);
    expect(html).toContain(
      '<label for="f-f-0">Customer</label><select id="f-f-0" name="customer" aria-describedby="f-f-0-help"><option value="">Choose…</option><option value="3">&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;</option><option value="2">Ada</option><option value="1">Zoe</option></select><p class="field-hint" id="f-f-0-help">The customer who ordered.</p>',
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
  });

  it('sends the chosen row as a number; a forged value is refused, naming the item, and nothing runs', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const ok = await shop.submit('start', 'f', { customer: '2' });
    if (!ok.ok) throw new Error(JSON.stringify(ok.errors));
    expect(ok.run!.input).toEqual({ customer: 2, urgent: false });
    const runs = (await engine.listRuns()).runs.length;
    for (const forged of ['9', 'abc', '2 OR 1=1', HOSTILE]) {
      const result = await shop.submit('start', 'f', { customer: forged });
      if (result.ok) throw new Error(`${forged} was taken`);
      expect(result.reason).toBe('invalid');
      expect(result.errors).toEqual([
        { code: 'not_an_option', path: 'customer', message: 'Customer must be one of its choices' },
      ]);
      const shown = item(formOf(result.screen, 'f'), 'customer');
      expect(shown.error).toBe('Customer must be one of its choices');
      // The value sent is kept, but is no choice: nothing is selected.
      expect(renderScreen('shop', result.screen)).not.toMatch(/<option[^>]* selected/);
    }
    expect((await engine.listRuns()).runs.length).toBe(runs);
  });

  it('a write form writes the chosen row, and refuses a forged one without writing', async () => {
    const { engine, spreadsheets } = await setUp();
    const shop = await engine.applications.open('shop');
    const forged = await shop.submit('start', 'add', { order_id: '1', customer_id: '7', note: 'x' });
    expect(forged.ok || forged.errors.map((e) => [e.path, e.code])).toEqual([
      ['customer_id', 'not_an_option'],
    ]);
    expect(spreadsheets.cells('shop', 'orders')).toEqual([['order_id', 'customer_id', 'note', 'rush']]);
    if (!forged.ok) {
      // The form comes back with what was typed.
      const add = formOf(forged.screen, 'add');
      expect(item(add, 'note').value).toBe('x');
      expect(item(add, 'order_id').value).toBe('1');
    }
    const saved = await shop.submit('start', 'add', {
      order_id: '1',
      customer_id: '3',
      note: 'line one\r\nline two\n',
      rush: 'on',
    });
    if (!saved.ok) throw new Error(JSON.stringify(saved.errors));
    expect(spreadsheets.cells('shop', 'orders')).toEqual([
      ['order_id', 'customer_id', 'note', 'rush'],
      [1, 3, 'line one\nline two\n', true],
    ]);
  });

  it('shows the row being edited as chosen', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const result = await shop.submit('start', 'add', { order_id: 'x', customer_id: '2' });
    if (result.ok) throw new Error('expected a failure');
    expect(renderScreen('shop', result.screen)).toContain('<option value="2" selected>Ada</option>');
  });
});

describe('a ref item over a large entity', () => {
  it('is a search box: nothing listed until a search, then the rows whose label contains the text', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const blank = item(formOf(await shop.screen('start'), 'f'), 'person');
    expect(blank.options).toEqual([]);
    expect(blank.search).toEqual({ param: 'f_person_q', query: '' });
    expect(blank.notice).toBe('Search to list the rows of "people" to choose from.');
    const found = item(formOf(await shop.screen('start', { f_person_q: 'Person 12' }), 'f'), 'person');
    expect(found.options).toEqual(
      Array.from({ length: 10 }, (_, i) => ({ value: `p${120 + i}`, label: `Person ${120 + i}` })),
    );
    expect(found.notice).toBe('10 matches of "Person 12".');
    const one = item(formOf(await shop.screen('start', { f_person_q: ' 077 ' }), 'f'), 'person');
    expect([one.options, one.notice, one.search]).toEqual([
      [{ value: 'p77', label: 'Person 077' }],
      '1 match of "077".',
      { param: 'f_person_q', query: '077' },
    ]);
    const none = item(formOf(await shop.screen('start', { f_person_q: 'Nobody' }), 'f'), 'person');
    expect(none.options).toEqual([]);
    expect(none.notice).toBe('No row of "people" matches "Nobody".');
  });

  it('lists at most 50 matches, and says so', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const many = item(formOf(await shop.screen('start', { f_person_q: 'Person' }), 'f'), 'person');
    expect(many.options).toHaveLength(50);
    expect(many.options![0]).toEqual({ value: 'p1', label: 'Person 001' });
    expect(many.notice).toBe(
      'Showing the first 50 matches of "Person": search for more of the text to narrow them.',
    );
  });

  it('is a GET form of the screen that keeps its other query parameters, and works without script', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const screen = await shop.screen('start', { who: 'a"b<', f_person_q: '25', grid_page: '2' });
    const html = renderScreen('shop', screen, { basePath: '/api' });
    expect(html).toContain(
      '<div class="ref-search-box"><label class="search-label" for="f-f-1-q">Search Person</label><input type="search" id="f-f-1-q" name="f_person_q" value="25" form="f-f-1-search" maxlength="200"><button type="submit" form="f-f-1-search">Search</button></div>',
    );
    // The search form follows the form it serves (forms do not nest); the search text itself is the box's.
    expect(html).toContain(
      '</form><form class="ref-search" id="f-f-1-search" method="get" action="/api/applications/shop/screens/start"><input type="hidden" name="who" value="a&quot;b&lt;"><input type="hidden" name="grid_page" value="2"></form>',
    );
    expect(html).toContain(
      '<option value="p25">Person 025</option><option value="p125">Person 125</option><option value="p225">Person 225</option><option value="p250">Person 250</option></select>',
    );
    expect((html.match(/<script/g) ?? []).length).toBe(0);
  });

  it('keeps a value sent back among the choices; checks a submitted one against the whole entity', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const result = await shop.submit('start', 'f', { person: 'p240', customer: '99' });
    if (result.ok) throw new Error('expected a failure');
    expect(result.errors.map((e) => e.path)).toEqual(['customer']);
    const person = item(formOf(result.screen, 'f'), 'person');
    expect(person.options).toEqual([{ value: 'p240', label: 'Person 240' }]);
    expect(renderScreen('shop', result.screen)).toContain(
      '<option value="p240" selected>Person 240</option>',
    );
    const ok = await shop.submit('start', 'f', { person: 'p240' });
    expect(ok.ok && ok.run!.input).toEqual({ person: 'p240', urgent: false });
    const forged = await shop.submit('start', 'f', { person: 'p251' });
    expect(forged.ok || forged.errors.map((e) => e.code)).toEqual(['not_an_option']);
  });

  it('cuts a search text to 200 characters and escapes it', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const screen = await shop.screen('start', { f_person_q: `${HOSTILE}${'x'.repeat(300)}` });
    const person = item(formOf(screen, 'f'), 'person');
    expect([...person.search!.query]).toHaveLength(200);
    const html = renderScreen('shop', screen);
    expect(html).not.toContain('<img');
    expect(html).toContain('value="&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img');
  });
});

describe('pickers over HTTP', () => {
  it('a search is a plain GET of the screen; a forged value posted is a 422 page, and nothing runs', async () => {
    const { engine } = await setUp();
    const handler = createHandler(engine);
    const page = await handler(
      new Request('http://localhost/applications/shop/screens/start?f_person_q=Person+024&x=1'),
    );
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<option value="p24">Person 024</option>');
    expect(html).toContain('<input type="hidden" name="x" value="1">');
    const posted = await handler(
      new Request('http://localhost/applications/shop/screens/start/forms/f', {
        method: 'POST',
        body: 'customer=42&size=s',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
    );
    expect(posted.status).toBe(422);
    expect(await posted.text()).toContain(
      '<p class="field-error" id="f-f-0-error">Customer must be one of its choices</p>',
    );
    expect((await engine.listRuns()).runs).toEqual([]);
  });
});

describe('select, textarea and checkbox items', () => {
  it('a select lists its options (labels escaped) and refuses any other value', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const html = renderScreen('shop', await shop.screen('start'));
    expect(html).toContain(
      '<select id="f-f-2" name="size"><option value="">Choose…</option><option value="s">Small</option><option value="m">Medium</option><option value="&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;">&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;</option></select>',
    );
    const ok = await shop.submit('start', 'f', { size: HOSTILE, count: '2' });
    expect(ok.ok && ok.run!.input).toEqual({ size: HOSTILE, count: 2, urgent: false });
    const runs = (await engine.listRuns()).runs.length;
    const forged = await shop.submit('start', 'f', { size: 'xl', count: '3' });
    expect(forged.ok || forged.errors).toEqual([
      { code: 'not_an_option', path: 'size', message: 'Size must be one of its choices' },
      { code: 'not_an_option', path: 'count', message: 'Count must be one of its choices' },
    ]);
    expect((await engine.listRuns()).runs.length).toBe(runs);
    if (!forged.ok)
      expect(renderScreen('shop', forged.screen)).toContain(
        '<select id="f-f-2" name="size" aria-invalid="true" aria-describedby="f-f-2-error">',
      );
  });

  it('a textarea keeps line breaks (CR LF as LF) and is re-rendered escaped; a checkbox is a boolean', async () => {
    const { engine } = await setUp();
    const shop = await engine.applications.open('shop');
    const ok = await shop.submit('start', 'f', { remarks: '\r\nfirst\r\n  second', urgent: 'on' });
    expect(ok.ok && ok.run!.input).toEqual({ remarks: '\nfirst\n  second', urgent: true });
    const bad = await shop.submit('start', 'f', { remarks: `\n</textarea>${HOSTILE}`, customer: '0' });
    if (bad.ok) throw new Error('expected a failure');
    const html = renderScreen('shop', bad.screen);
    // A leading newline is doubled: the HTML parser drops the first one after <textarea>.
    expect(html).toContain(
      '<textarea id="f-f-4" name="remarks" rows="4">\n\n&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;',
    );
    expect(html).toContain('<input type="checkbox" id="f-f-5" name="urgent" value="on">');
    const box = await shop.submit('start', 'f', { urgent: 'maybe' });
    expect(box.ok || box.errors.map((e) => e.code)).toEqual(['invalid_boolean']);
  });
});

describe('pickers under the access policy', () => {
  const BASE = ['app.use:shop', 'workflow.run:pick', 'entity.read:people', 'entity.read:orders'];
  const policy: AccessPolicy = {
    roles: {
      sales: { grants: [...BASE, 'entity.read:customers'] },
      guest: { grants: BASE },
      shady: { grants: [...BASE, 'entity.read:customers'] },
    },
    rows: [
      {
        entity: 'customers',
        roles: ['sales'],
        filters: [{ column: 'owner', operator: 'EQUALS', value: '{{user.id}}' }],
      },
    ],
    columns: [{ entity: 'customers', roles: ['shady'], hidden: ['name'] }],
  };
  const ann: Principal = { id: 'ann', kind: 'user', roles: ['sales'] };
  const gus: Principal = { id: 'gus', kind: 'user', roles: ['guest'] };
  const sly: Principal = { id: 'sly', kind: 'user', roles: ['shady'] };

  it('list only the rows the viewer may read, and refuse a row she may not', async () => {
    const { engine } = await setUp(policy);
    const shop = await engine.as(ann).applications.open('shop');
    const customer = item(formOf(await shop.screen('start'), 'f'), 'customer');
    expect(customer.options).toEqual([
      { value: '3', label: HOSTILE },
      { value: '1', label: 'Zoe' },
    ]);
    const other = await shop.submit('start', 'f', { customer: '2' });
    expect(other.ok || other.errors.map((e) => [e.path, e.code])).toEqual([['customer', 'not_an_option']]);
    expect((await engine.listRuns()).runs).toEqual([]);
    const own = await shop.submit('start', 'f', { customer: '1' });
    expect(own.ok).toBe(true);
  });

  it('a viewer who may not read the entity gets no rows and a clear message; a value she sends is refused', async () => {
    const { engine } = await setUp(policy);
    const shop = await engine.as(gus).applications.open('shop');
    const screen = await shop.screen('start');
    const customer = item(formOf(screen, 'f'), 'customer');
    expect(customer.options).toEqual([]);
    expect(customer.notice).toBe(
      'you may not see the rows of "customers", so there is nothing to choose here.',
    );
    const html = renderScreen('shop', screen);
    expect(html).not.toContain('Zoe');
    expect(html).toContain('<option value="">Nothing to choose</option></select>');
    expect(html).toContain(
      '<p class="field-hint" id="f-f-0-notice">you may not see the rows of &quot;customers&quot;, so there is nothing to choose here.</p>',
    );
    // People, which she may read, are still searchable.
    expect(item(formOf(screen, 'f'), 'person').search).not.toBeNull();
    const sent = await shop.submit('start', 'f', { customer: '1' });
    expect(sent.ok || sent.errors.map((e) => [e.path, e.code])).toEqual([['customer', 'forbidden']]);
    expect((await engine.listRuns()).runs).toEqual([]);
  });

  it('a label column hidden from the viewer lists nothing rather than the values alone', async () => {
    const { engine } = await setUp(policy);
    const shop = await engine.as(sly).applications.open('shop');
    const customer = item(formOf(await shop.screen('start'), 'f'), 'customer');
    expect(customer.options).toEqual([]);
    expect(customer.notice).toContain('you may not see the rows of "customers"');
  });
});

describe('ref and select items when the application is stored', () => {
  async function refused(change: (config: any) => void) {
    const { engine } = await setUp();
    const config = app() as any;
    change(config);
    const error = await engine.applications.put('shop', config).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((i) => [i.path, i.code, i.message]);
  }
  const items = (config: any, form: number) => config.screens[0].components[form][0].form.form_items;

  it('refuses a ref to an unknown entity or columns, naming the field path', async () => {
    expect(await refused((c) => (items(c, 0)[0].ref.entity = 'nope'))).toEqual([
      [
        'screens[0].components[0][0].form.form_items[0].ref.entity',
        'unknown_entity',
        'form "f" item "Customer" picks from entity "nope", which does not exist',
      ],
    ]);
    const columns = await refused((c) => {
      items(c, 1)[1].ref.label_column = 'title';
      items(c, 1)[1].ref.value_column = 'key';
    });
    expect(columns.map((i) => i.slice(0, 2))).toEqual(
      [
        ['screens[1].components[0][0].form.form_items[1].ref.label_column', 'unknown_column'],
        ['screens[1].components[0][0].form.form_items[1].ref.value_column', 'unknown_column'],
      ].map(([path, code]) => [path!.replace('screens[1].components[0]', 'screens[0].components[1]'), code]),
    );
    expect(columns[0]![2]).toBe(
      'form "add" item "Customer" names label_column "title", which entity "customers" does not have (columns: id, name, owner, secret)',
    );
  });

  it('refuses a ref or select that does not fit the column it writes or the input property it fills', async () => {
    // A ref sending customers.name (text) into orders.customer_id (a number).
    expect(await refused((c) => (items(c, 1)[1].ref.value_column = 'name'))).toEqual([
      [
        'screens[0].components[1][0].form.form_items[1].ref.value_column',
        'type_mismatch',
        'form item "Customer" sends column "name" of entity "customers", which is STRING, but column "customer_id" is NUMBER',
      ],
    ]);
    // A textarea or a select into a BOOLEAN column; a checkbox into a text one.
    const kinds = await refused((c) => {
      items(c, 1)[3].type = 'textarea';
      items(c, 1)[2].type = 'checkbox';
    });
    expect(kinds.map((i) => i[0])).toEqual([
      'screens[0].components[1][0].form.form_items[2].type',
      'screens[0].components[1][0].form.form_items[3].type',
    ]);
    // A select with text options into a number column.
    const select = await refused((c) => {
      items(c, 1)[0] = { label: 'Order', name: 'order_id', type: 'select', options: [{ value: 'one' }] };
    });
    expect(select).toEqual([
      [
        'screens[0].components[1][0].form.form_items[0].options',
        'type_mismatch',
        'form item "Order" offers values that are not numbers, but column "order_id" is NUMBER',
      ],
    ]);
    // A ref sending text into the workflow's integer input.
    const input = await refused((c) => (items(c, 0)[0].ref.value_column = 'name'));
    expect(input.map((i) => i.slice(0, 2))).toEqual([
      ['screens[0].components[0][0].form.form_items[0].type', 'type_mismatch'],
    ]);
  });
});
