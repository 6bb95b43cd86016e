import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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
    expect(text.trimEnd().split(/\r?\n/).at(-1)).toBe('99,"Zoë, ""the"" tester",=Oslo');
    const second = await loadProject(root, { sheets: 'files' });
    const read = await second.engine.catalog.getEntity({
      entity_name: 'customers',
      operation: { filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: 99 }] },
    });
    expect(read.body.table.rows).toEqual([[99, 'Zoë, "the" tester', '=Oslo']]);
  });

  it('gives an entity without a sheet file one holding its header row', async () => {
    const root = copyOfApp();
    rmSync(join(root, 'sheets/shop/orders.csv'));
    const project = await loadProject(root, { sheets: 'files' });
    expect(readFileSync(join(root, 'sheets/shop/orders.csv'), 'utf8').trim()).toBe(
      'order_id,customer_id,item,amount',
    );
    await project.engine.catalog.append('orders', [{ order_id: 1, customer_id: 1, item: 'pen', amount: 2 }]);
    expect(readFileSync(join(root, 'sheets/shop/orders.csv'), 'utf8')).toContain('1,1,pen,2');
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
