import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProject } from '../../src/node/project.js';
import { parseCsv } from '../../src/adapters/node/csv.js';
import { ValidationError } from '../../src/errors/index.js';
import { ROOT, tempDir } from './helpers.js';

const temps: (() => void)[] = [];
afterEach(() => temps.splice(0).forEach((remove) => remove()));

/** A copy of an example folder in a temp dir, to break on purpose. */
function copyExample(name: string): string {
  const { dir, remove } = tempDir(name);
  temps.push(remove);
  cpSync(join(ROOT, 'examples', name), dir, { recursive: true });
  return dir;
}

async function issuesOf(dir: string) {
  const error = await loadProject(dir).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues;
}

describe('parseCsv', () => {
  it('reads quotes, escaped quotes, commas and newlines in quoted fields, CRLF and a BOM', () => {
    const text = '\uFEFFid,name,note\r\n1,"Lovelace, Ada","said ""hi""\r\nthen left"\r\n2,Grace,\r\n';
    expect(parseCsv(text)).toEqual([
      ['id', 'name', 'note'],
      ['1', 'Lovelace, Ada', 'said "hi"\r\nthen left'],
      ['2', 'Grace', ''],
    ]);
  });

  it('keeps a last line without a line end, empty quoted fields and blank lines', () => {
    expect(parseCsv('a,b\n\n"",x\n3,4')).toEqual([['a', 'b'], [''], ['', 'x'], ['3', '4']]);
    expect(parseCsv('')).toEqual([]);
  });

  it('names the line of a quote left open and of text after a closing quote', () => {
    expect(() => parseCsv('a,b\n1,"open\nstill')).toThrow(/line 2: a quoted field is not closed/);
    expect(() => parseCsv('a,b\n1,"x"y\n')).toThrow(/line 2: unexpected "y" after a closing quote/);
  });
});

describe('loadProject', () => {
  it('loads an example: CSV cells are coerced by column type, empty cells are null', async () => {
    const { engine, problems } = await loadProject(join(ROOT, 'examples/invoices'));
    expect(problems).toEqual([]);
    const read = await engine.catalog.getEntity({
      entity_name: 'orders',
      operation: { filters: [{ column: 'order_id', operator: 'EQUALS', value_type: 'NUMBER', value: 12 }] },
    });
    expect(read.body.table.rows).toEqual([[12, 1, 'Notebook "Analytical"', 4.25, 'paid']]);
    const grace = await engine.catalog.getEntity({
      entity_name: 'customers',
      operation: { filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: 2 }] },
    });
    // order_total is computed: the sum of Grace's orders.
    expect(grace.body.table.rows).toEqual([
      [2, 'Grace Hopper', 'Arlington, Virginia', 'grace@example.com', 80],
    ]);
  });

  it('lists every problem of every file with the file and the path inside it', async () => {
    const dir = copyExample('invoices');
    writeFileSync(join(dir, 'entities/orders.json'), '{\n  "name": "orders",\n  "columns": [\n}\n');
    const customers = JSON.parse(readFileSync(join(dir, 'entities/customers.json'), 'utf8'));
    customers.columns[1].type = 'TEXTY';
    customers.primary_key = ['nope'];
    writeFileSync(join(dir, 'entities/customers.json'), JSON.stringify(customers));
    const workflow = JSON.parse(readFileSync(join(dir, 'workflows/invoice.json'), 'utf8'));
    workflow.steps[2].l2_data.action = 'create_pfd';
    writeFileSync(join(dir, 'workflows/invoice.json'), JSON.stringify(workflow));
    writeFileSync(join(dir, 'sheets/shop/customers.csv'), 'id,name,city\n1,"Ada\n');

    const issues = await issuesOf(dir);
    const where = issues.map((i) => i.path);
    expect(where).toContain('entities/orders.json');
    expect(issues.find((i) => i.path === 'entities/orders.json')!.message).toMatch(
      /invalid JSON at line 4, column 1/,
    );
    expect(where).toContain('entities/customers.json: columns[1].type');
    expect(where).toContain('entities/customers.json: primary_key[0]');
    expect(where).toContain('workflows/invoice.json: steps[2].l2_data');
    expect(issues.find((i) => i.path === 'workflows/invoice.json: steps[2].l2_data')!.message).toMatch(
      /create_pfd/,
    );
    expect(where).toContain('sheets/shop/customers.csv: line 2');
  });

  it('reports cells an entity cannot read, naming the CSV file and the cell', async () => {
    const dir = copyExample('invoices');
    writeFileSync(
      join(dir, 'sheets/shop/orders.csv'),
      'order_id,customer_id,item,amount,status\n10,1,Lamp,twenty,open\n',
    );
    const issues = await issuesOf(dir);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('sheets/shop/orders.csv');
    expect(issues[0]!.message).toMatch(/entity "orders".*D2/);
  });

  it('refuses a transform whose script is not in scripts/, naming the step field', async () => {
    const dir = copyExample('summary');
    writeFileSync(join(dir, 'scripts/other.js'), '');
    cpSync(join(dir, 'scripts/summarize.js'), join(dir, 'scripts/summarise.txt'));
    writeFileSync(join(dir, 'scripts/summarize.js'), '');
    const workflow = JSON.parse(readFileSync(join(dir, 'workflows/summarize_orders.json'), 'utf8'));
    workflow.steps[0].atlas_data.input_data.code_file = 'sumarize.js';
    writeFileSync(join(dir, 'workflows/summarize_orders.json'), JSON.stringify(workflow));
    const issues = await issuesOf(dir);
    expect(issues).toEqual([
      expect.objectContaining({
        code: 'unknown_script',
        path: 'workflows/summarize_orders.json: steps[0].atlas_data.input_data.code_file',
      }),
    ]);
  });

  it('refuses steps that name an entity not in entities/, naming each step field', async () => {
    const dir = copyExample('summary');
    const workflow = JSON.parse(readFileSync(join(dir, 'workflows/summarize_orders.json'), 'utf8'));
    workflow.steps[0].atlas_data.output_entities[0].name = 'order_total';
    workflow.steps[1].atlas_data.input_entities = ['ordres'];
    writeFileSync(join(dir, 'workflows/summarize_orders.json'), JSON.stringify(workflow));
    const issues = await issuesOf(dir);
    expect(issues.map((issue) => `${issue.code} ${issue.path}`)).toEqual([
      'unknown_entity workflows/summarize_orders.json: steps[0].atlas_data.output_entities[0].name',
      'unknown_entity workflows/summarize_orders.json: steps[1].atlas_data.input_entities[0]',
    ]);
    expect(issues[0]!.message).toBe(
      'entity "order_total" is not in entities/ (found: customers, order_totals, orders)',
    );
  });

  it('names a scripts/ file whose name no script may have, and goes on to list the other problems', async () => {
    const dir = copyExample('summary');
    writeFileSync(join(dir, 'scripts/-helper.js'), 'writeEntity("x", [])');
    writeFileSync(join(dir, 'workflows/broken.json'), '{"name": ');
    const issues = await issuesOf(dir);
    expect(issues.map((issue) => issue.path)).toEqual([
      'scripts/-helper.js: name',
      expect.stringMatching(/^workflows\/broken\.json/),
    ]);
  });

  it('reads definitions and sheets that are symbolic links as the files they point to', async () => {
    const dir = copyExample('summary');
    const elsewhere = copyExample('summary');
    for (const file of ['entities/orders.json', 'sheets/shop/orders.csv']) {
      rmSync(join(dir, file));
      symlinkSync(join(elsewhere, file), join(dir, file));
    }
    renameSync(join(dir, 'sheets/shop'), join(elsewhere, 'shop'));
    symlinkSync(join(elsewhere, 'shop'), join(dir, 'sheets/shop'));
    const { engine, problems } = await loadProject(dir);
    expect(problems).toEqual([]);
    const read = await engine.catalog.getEntity({ entity_name: 'orders', operation: {} });
    const rows = parseCsv(readFileSync(join(elsewhere, 'sheets/shop/orders.csv'), 'utf8')).slice(1);
    expect(read.body.table.rows).toHaveLength(rows.length);
    expect(rows.length).toBeGreaterThan(0);
  });

  it('warns about what it ignores, and mirrors stored files into outDir', async () => {
    const dir = copyExample('invoices');
    mkdirSync(join(dir, 'workflow'));
    writeFileSync(join(dir, 'entities/notes.txt'), 'hello');
    writeFileSync(join(dir, 'sheets/shop/unused.csv'), 'a\n1\n');
    const out = join(dir, 'pdfs');
    const written: string[] = [];
    const { engine, files, problems, chat } = await loadProject(dir, {
      outDir: out,
      onFileWritten: (p) => written.push(p),
      filesBaseUrl: 'http://files.test/',
    });
    expect(problems.map((p) => `${p.code} ${p.path}`).sort()).toEqual([
      'ignored entities/notes.txt',
      'unknown_folder workflow',
      'unused_sheet sheets/shop/unused.csv',
    ]);
    const run = await engine.run('invoice', { customer_id: 3 });
    expect(run.status).toBe('succeeded');
    expect(run.output).toMatchObject({
      file_url: 'http://files.test/invoice-3.pdf',
      customer_name: 'Linus Torvalds',
      order_count: 1,
    });
    expect(written).toEqual([join(out, 'invoice-3.pdf')]);
    expect(readFileSync(join(out, 'invoice-3.pdf'))).toEqual(
      Buffer.from(files.read('http://files.test/invoice-3.pdf')!),
    );
    expect(chat.messages).toEqual([
      { channel: 'billing', message: 'Invoice for Linus Torvalds is ready: http://files.test/invoice-3.pdf' },
    ]);
  });

  it('enforces the foreign key of the relationship file on appends', async () => {
    const { engine } = await loadProject(join(ROOT, 'examples/invoices'));
    await expect(
      engine.catalog.append('orders', [{ order_id: 99, customer_id: 42, item: 'Ghost', amount: 1 }]),
    ).rejects.toThrow(/customer/);
  });

  it('names a folder that does not exist', async () => {
    const issues = await issuesOf(join(ROOT, 'examples/nope'));
    expect(issues[0]!.message).toMatch(/is not a folder/);
    expect(existsSync(join(ROOT, 'examples/nope'))).toBe(false);
  });
});
