import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors/index.js';
import { loadProject } from '../../src/node/project.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A copy of examples/app to change freely. */
function copyOfApp(): string {
  dir = mkdtempSync(join(tmpdir(), 'stepwire-project-files-'));
  cpSync('examples/app', dir, { recursive: true });
  return dir;
}

describe('loadProject with sheets: "files"', () => {
  it('appends into the CSV files of sheets/, and a new load reads them back', async () => {
    const root = copyOfApp();
    const first = await loadProject(root, { sheets: 'files' });
    await first.engine.catalog.append('customers', [{ id: 99, name: 'Zoë, "the" tester', city: '=Oslo' }]);
    const text = readFileSync(join(root, 'sheets/shop/customers.csv'), 'utf8');
    expect(text.trimEnd().split(/\r?\n/).at(-1)).toBe('99,"Zoë, ""the"" tester",=Oslo,,');
    const second = await loadProject(root, { sheets: 'files' });
    const read = await second.engine.catalog.getEntity({
      entity_name: 'customers',
      operation: { filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: 99 }] },
    });
    // Columns id, name, city, owner, then the rollups order_count and order_total, then credit_limit.
    expect(read.body.table.rows).toEqual([[99, 'Zoë, "the" tester', '=Oslo', null, 0, 0, null]]);
  });

  it('gives an entity without a sheet file one holding its header row', async () => {
    const root = copyOfApp();
    rmSync(join(root, 'sheets/shop/orders.csv'));
    const project = await loadProject(root, { sheets: 'files' });
    // The stored columns only: customer_name (a lookup) and month (a formula) have no header.
    expect(readFileSync(join(root, 'sheets/shop/orders.csv'), 'utf8').trim()).toBe(
      'order_id,customer_id,item,amount,placed,status',
    );
    await project.engine.catalog.append('orders', [
      { order_id: 1, customer_id: 1, item: 'pen', amount: 2, placed: '2026-11-02', status: 'open' },
    ]);
    expect(readFileSync(join(root, 'sheets/shop/orders.csv'), 'utf8')).toContain('1,1,pen,2,2026-11-02,open');
  });

  it('creates no file for an entity whose sheet names reach outside sheets/, and names the entity', async () => {
    dir = mkdtempSync(join(tmpdir(), 'stepwire-project-files-'));
    const root = join(dir, 'home', 'project');
    cpSync('examples/app', root, { recursive: true });
    const entity = (name: string, spreadsheet_id: string, sheet_name: string) => ({
      name,
      columns: [{ name: 'id', type: 'NUMBER' }],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id, sheet_name, origin: { row: 0, col: 0 } },
    });
    writeFileSync(join(root, 'entities/a.json'), JSON.stringify(entity('a', '../../outside-dir', 'x')));
    writeFileSync(
      join(root, 'entities/b.json'),
      JSON.stringify(entity('b', 'shop', '../../../outside-file')),
    );
    const error = await loadProject(root, { sheets: 'files' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const paths = (error as ValidationError).issues.map((issue) => [issue.path, issue.message]);
    expect(paths).toEqual([
      [
        'entities/a.json',
        expect.stringMatching(/entity "a": .*"\.\.\/\.\.\/outside-dir" may not contain "\/"/),
      ],
      [
        'entities/b.json',
        expect.stringMatching(/entity "b": .*"\.\.\/\.\.\/\.\.\/outside-file" may not contain "\/"/),
      ],
    ]);
    // "sheets/../../outside-dir" and "sheets/shop/../../../outside-file.csv" would land beside the project.
    expect(readdirSync(join(dir, 'home'))).toEqual(['project']);
  });

  it('leaves the files alone in the default memory mode', async () => {
    const root = copyOfApp();
    const before = readFileSync(join(root, 'sheets/shop/customers.csv'), 'utf8');
    const project = await loadProject(root);
    await project.engine.catalog.append('customers', [{ id: 98, name: 'Mem', city: 'Nowhere' }]);
    expect(readFileSync(join(root, 'sheets/shop/customers.csv'), 'utf8')).toBe(before);
    expect(existsSync(join(root, 'sheets/shop/customers.csv'))).toBe(true);
  });
});
