// The rules of the value a form item fills, shown beside it and checked on the server: a write
// form shows its column's rules (required, enum as a select, min_length / max_length, pattern,
// format, the entity's checks on that column) and gets the write's refusals next to its items; a
// form that runs a workflow shows the rules of the workflow's input.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Engine,
  MemorySpreadsheets,
  renderScreen,
  type ApplicationBody,
  type Entity,
  type ResolvedForm,
  type ResolvedScreen,
  type Workflow,
} from '../../src/index.js';

const contacts: Entity = {
  name: 'contacts',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING', required: true, min_length: 2, max_length: 40 },
    { name: 'email', type: 'STRING', format: 'email' },
    { name: 'site', type: 'STRING', format: 'url' },
    { name: 'code', type: 'STRING', pattern: '^[A-Z]{2}<[0-9]+>$' },
    { name: 'status', type: 'STRING', enum: ['new', 'active', 'closed'] },
    { name: 'level', type: 'NUMBER', enum: [1, 2, 3] },
    { name: 'amount', type: 'NUMBER', number: { min: 0 } },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'crm', sheet_name: 'contacts', origin: { row: 0, col: 0 } },
  checks: [
    { expression: 'amount < 1000.0', message: '<b>Amount</b> must stay under 1000' },
    { expression: 'status != "closed" || amount == 0.0', message: 'A closed contact owes nothing' },
  ],
};

const HEADER = ['id', 'name', 'email', 'site', 'code', 'status', 'level', 'amount'];

/** Echoes its input; the schema holds rules of its own. */
const signup: Workflow = {
  name: 'signup',
  steps: [
    {
      name: 'echo',
      type: 'l2',
      l2_data: { provider: 'test', module: 'app', action: 'echo', input_data: { email: '{{input.email}}' } },
    },
  ],
  wires: [],
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        nick: { type: 'string', minLength: 3, maxLength: 12, pattern: '^[a-z]+$' },
        plan: { type: 'string', enum: ['free', 'pro'] },
        seats: { type: 'integer', minimum: 1, maximum: 50 },
        note: { type: 'string' },
      },
      required: ['email', 'note'],
    },
    default_data: { note: 'none' },
  },
  workflow_output: { name: 'output', output_data: { email: '{{echo.email}}' } },
};

function app(): ApplicationBody {
  const text = (label: string, name: string) => ({ label, name, type: 'text' as const });
  return {
    start_screen_url: 'start',
    screens: [
      {
        url: 'start',
        components: [
          [
            {
              name: 'add',
              type: 'form',
              form: {
                form_items: [
                  { label: 'Id', name: 'id', type: 'number' },
                  text('Name', 'name'),
                  text('Email', 'email'),
                  text('Site', 'site'),
                  text('Code', 'code'),
                  text('Status', 'status'),
                  { label: 'Level', name: 'level', type: 'number' },
                  { label: 'Amount', name: 'amount', type: 'number' },
                ],
                job: { type: 'write', entity_name: 'contacts', write_mode: 'append' },
              },
            },
          ],
          [
            {
              name: 'join',
              type: 'form',
              form: {
                form_items: [
                  text('Email', 'email'),
                  text('Nick', 'nick'),
                  text('Plan', 'plan'),
                  { label: 'Seats', name: 'seats', type: 'number' },
                  text('Note', 'note'),
                ],
                job: { type: 'sync', workflow_name: 'signup' },
              },
            },
          ],
        ],
      },
    ],
  };
}

async function setUp() {
  const spreadsheets = new MemorySpreadsheets({ crm: { contacts: [HEADER] } });
  const engine = new Engine({ spreadsheets });
  engine.actions.register({
    provider: 'test',
    module: 'app',
    action: 'echo',
    input: z.looseObject({}),
    run: (input) => input,
  });
  await engine.catalog.registerEntity(contacts);
  await engine.workflows.create(signup);
  await engine.applications.put('crm', app());
  return { engine, spreadsheets, crm: await engine.applications.open('crm') };
}

function formOf(screen: ResolvedScreen, name: string): ResolvedForm {
  const found = screen.rows.flat().find((c) => c.type === 'form' && c.name === name);
  if (!found) throw new Error(`no form ${name}`);
  return found as ResolvedForm;
}

const good = {
  id: '1',
  name: 'Ada',
  email: 'ada@example.com',
  site: 'https://ada.example',
  code: 'AB<12>',
  status: 'active',
  level: '2',
  amount: '10',
};

describe('a form that writes a row shows its columns’ rules', () => {
  it('as attributes and hints: required, lengths, formats, pattern, checks; an enum as a select', async () => {
    const { crm } = await setUp();
    const screen = await crm.screen('start');
    const add = formOf(screen, 'add');
    expect(add.items.map((i) => [i.property, i.type, i.required])).toEqual([
      ['id', 'number', true],
      ['name', 'text', true],
      ['email', 'text', false],
      ['site', 'text', false],
      ['code', 'text', false],
      ['status', 'select', false],
      ['level', 'select', false],
      ['amount', 'number', false],
    ]);
    expect(add.items[7]!.rules.checks).toEqual(['<b>Amount</b> must stay under 1000']);
    const html = renderScreen('crm', screen);
    expect(html).toContain(
      '<label for="f-add-1">Name<span class="required" aria-hidden="true"> *</span></label><input type="text" id="f-add-1" name="name" minlength="2" maxlength="40" required aria-describedby="f-add-1-hint"><p class="field-hint" id="f-add-1-hint">From 2 to 40 characters.</p>',
    );
    expect(html).toContain(
      '<input type="email" id="f-add-2" name="email" aria-describedby="f-add-2-hint"><p class="field-hint" id="f-add-2-hint">An email address, like name@example.com.</p>',
    );
    expect(html).toContain('<input type="url" id="f-add-3" name="site" aria-describedby="f-add-3-hint">');
    // The pattern is shown (escaped), never set as the input's pattern: HTML anchors it, the column does not.
    expect(html).toContain(
      '<p class="field-hint" id="f-add-4-hint">Must match the pattern <code>^[A-Z]{2}&lt;[0-9]+&gt;$</code>.</p>',
    );
    expect(html).not.toMatch(/ pattern="/);
    expect(html).toContain(
      '<select id="f-add-5" name="status"><option value="">Choose…</option><option value="new">new</option><option value="active">active</option><option value="closed">closed</option></select>',
    );
    expect(html).toContain('<option value="3">3</option></select>');
    expect(html).toContain(
      'name="amount" min="0" step="any" aria-describedby="f-add-7-hint f-add-7-hint-1"><p class="field-hint" id="f-add-7-hint">At least 0.</p><p class="field-hint" id="f-add-7-hint-1">&lt;b&gt;Amount&lt;/b&gt; must stay under 1000</p>',
    );
    expect(html).not.toContain('<b>');
  });

  it('writes a row that keeps them, the enum values typed as their column', async () => {
    const { crm, spreadsheets } = await setUp();
    const result = await crm.submit('start', 'add', good);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(spreadsheets.cells('crm', 'contacts')).toEqual([
      HEADER,
      [1, 'Ada', 'ada@example.com', 'https://ada.example', 'AB<12>', 'active', 2, 10],
    ]);
  });

  it('puts each broken rule next to its item, keeps the values typed, and writes nothing', async () => {
    const { crm, spreadsheets } = await setUp();
    const sent = { ...good, name: 'A', email: 'ada at home', site: 'ftp://x', code: 'ab12' };
    const result = await crm.submit('start', 'add', sent);
    if (result.ok) throw new Error('expected a failure');
    expect(result.reason).toBe('invalid');
    expect(result.errors.map((e) => [e.path, e.code])).toEqual([
      ['name', 'rule_broken'],
      ['email', 'rule_broken'],
      ['site', 'rule_broken'],
      ['code', 'rule_broken'],
    ]);
    const add = formOf(result.screen, 'add');
    expect(add.items.map((i) => i.error)).toEqual([
      null,
      'Name must be at least 2 characters long, got 1',
      'Email must be an email address, got "ada at home"',
      'Site must be an http or https URL, got "ftp://x"',
      'Code must match pattern "^[A-Z]{2}<[0-9]+>$"',
      null,
      null,
      null,
    ]);
    expect(Object.fromEntries(add.items.map((i) => [i.property, i.value]))).toEqual(sent);
    expect(add.error).toBeNull();
    expect(spreadsheets.cells('crm', 'contacts')).toEqual([HEADER]);
  });

  it("puts a check on one column next to its item, a check on several on the form, in the check's words", async () => {
    const { crm, spreadsheets } = await setUp();
    const one = await crm.submit('start', 'add', { ...good, amount: '5000' });
    if (one.ok) throw new Error('expected a failure');
    expect(one.errors).toEqual([
      { code: 'check_failed', path: 'amount', message: '<b>Amount</b> must stay under 1000' },
    ]);
    const html = renderScreen('crm', one.screen);
    expect(html).toContain(
      '<p class="field-error" id="f-add-7-error">&lt;b&gt;Amount&lt;/b&gt; must stay under 1000</p>',
    );
    expect(html).toContain('value="5000"');
    const several = await crm.submit('start', 'add', { ...good, status: 'closed', amount: '3' });
    if (several.ok) throw new Error('expected a failure');
    expect(several.errors).toEqual([
      { code: 'check_failed', path: '', message: 'A closed contact owes nothing' },
    ]);
    expect(formOf(several.screen, 'add').error).toBe('A closed contact owes nothing');
    expect(spreadsheets.cells('crm', 'contacts')).toEqual([HEADER]);
  });

  it('refuses a value outside the enum and an empty required column before writing', async () => {
    const { crm, spreadsheets } = await setUp();
    const result = await crm.submit('start', 'add', { ...good, name: ' ', status: 'deleted', level: '4' });
    expect(result.ok || result.errors).toEqual([
      { code: 'required', path: 'name', message: 'Name is required' },
      { code: 'not_an_option', path: 'status', message: 'Status must be one of its choices' },
      { code: 'not_an_option', path: 'level', message: 'Level must be one of its choices' },
    ]);
    expect(spreadsheets.cells('crm', 'contacts')).toEqual([HEADER]);
  });
});

describe('a form that runs a workflow shows the rules of its input', () => {
  it('required (without a default), lengths, pattern, format, an enum as a select, number bounds', async () => {
    const { crm } = await setUp();
    const join = formOf(await crm.screen('start'), 'join');
    expect(join.items.map((i) => [i.property, i.type, i.required])).toEqual([
      ['email', 'text', true],
      ['nick', 'text', false],
      ['plan', 'select', false],
      ['seats', 'number', false],
      // Required, but the workflow has a default for it.
      ['note', 'text', false],
    ]);
    expect(join.items[1]!.rules).toEqual({
      minLength: 3,
      maxLength: 12,
      pattern: '^[a-z]+$',
      format: null,
      checks: [],
    });
    expect(join.items[3]!.numberConfig).toEqual({ min: 1, max: 50 });
    const html = renderScreen('crm', await crm.screen('start'));
    expect(html).toContain(
      '<input type="email" id="f-join-0" name="email" required aria-describedby="f-join-0-hint">',
    );
    expect(html).toContain(
      '<input type="text" id="f-join-1" name="nick" minlength="3" maxlength="12" aria-describedby="f-join-1-hint f-join-1-hint-1"><p class="field-hint" id="f-join-1-hint">From 3 to 12 characters.</p><p class="field-hint" id="f-join-1-hint-1">Must match the pattern <code>^[a-z]+$</code>.</p>',
    );
    expect(html).toContain('<option value="free">free</option><option value="pro">pro</option>');
    expect(html).toContain('name="seats" min="1" max="50" step="any"');
  });

  it('checks them on the server: errors next to the items, and nothing runs', async () => {
    const { crm, engine } = await setUp();
    const bad = await crm.submit('start', 'join', { email: 'x@example.com', nick: 'AB', seats: '0' });
    if (bad.ok) throw new Error('expected a failure');
    const join = formOf(bad.screen, 'join');
    expect(join.items[1]!.error).toMatch(/^Nick must/);
    expect(join.items[3]!.error).toMatch(/^Seats must be at least 1/);
    expect(join.items[1]!.value).toBe('AB');
    const forged = await crm.submit('start', 'join', { email: 'x@example.com', plan: 'gold' });
    expect(forged.ok || forged.errors.map((e) => [e.path, e.code])).toEqual([['plan', 'not_an_option']]);
    const missing = await crm.submit('start', 'join', { nick: 'ada' });
    expect(missing.ok || missing.errors.map((e) => [e.path, e.code])).toEqual([['email', 'required']]);
    expect((await engine.listRuns()).runs).toEqual([]);
    const ok = await crm.submit('start', 'join', {
      email: 'x@example.com',
      nick: 'ada',
      plan: 'pro',
      seats: '3',
    });
    expect(ok.ok && ok.run!.input).toEqual({
      email: 'x@example.com',
      nick: 'ada',
      plan: 'pro',
      seats: 3,
      note: 'none',
    });
  });
});
