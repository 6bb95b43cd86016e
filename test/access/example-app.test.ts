// examples/app with its access.json: sales people see their own customers, a manager sees all,
// nobody but finance sees credit_limit; on every path the app offers (reads, grids, form prefill).
import { describe, expect, it } from 'vitest';
import { loadProject } from '../../src/node/index.js';
import type { Principal, ResolvedDatagrid } from '../../src/index.js';

const ada: Principal = { id: 'ada', kind: 'user', roles: ['sales'], email: 'ada@example.com' };
const mona: Principal = { id: 'mona', kind: 'user', roles: ['manager'], email: 'mona@example.com' };
const fin: Principal = { id: 'fin', kind: 'user', roles: ['finance'], email: 'fin@example.com' };

async function grid(principal: Principal): Promise<ResolvedDatagrid> {
  const { engine } = await loadProject('examples/app');
  const app = await engine.as(principal).applications.open('invoices');
  const screen = await app.screen('start');
  return screen.rows
    .flat()
    .find((c): c is ResolvedDatagrid => c.type === 'datagrid' && c.entity === 'customers')!;
}

describe('examples/app under its access policy', () => {
  it('loads access.json: the policy is stored and in force', async () => {
    const { engine } = await loadProject('examples/app');
    expect((await engine.access.get())?.rows?.[0]?.entity).toBe('customers');
    const read = await engine.as(ada).catalog.getEntity({ entity_name: 'customers', operation: {} });
    // With the rollups order_count and order_total over the orders she may read.
    expect(read.body.table.rows).toEqual([
      [1, 'Ada Lovelace', 'London', 'ada@example.com', 3, 179.75],
      [3, 'Linus Torvalds', 'Helsinki', 'ada@example.com', 1, 2],
    ]);
  });

  it("the start screen's grid shows a sales person her customers, a manager all, finance the credit limits", async () => {
    const mine = await grid(ada);
    // The columns the grid names, less those the viewer may not read (credit_limit).
    expect(mine.columns.map((c) => c.name)).toEqual(['id', 'name', 'city', 'order_count', 'order_total']);
    expect(mine.rows.map((r) => r[0])).toEqual([1, 3]);
    const all = await grid(mona);
    expect(all.rows.map((r) => r[0])).toEqual([1, 2, 3]);
    expect(all.columns.map((c) => c.name)).not.toContain('credit_limit');
    const limits = await grid(fin);
    expect(limits.rows.map((r) => r.at(-1))).toEqual([5000, 12000, 800]);
  });

  it('the customer form is not filled with a customer she does not see, and saving it changes nothing', async () => {
    const { engine } = await loadProject('examples/app');
    const app = await engine.as(ada).applications.open('invoices');
    const screen = await app.screen('customer', { id: '2' });
    const form = screen.rows.flat().find((c) => c.type === 'form');
    expect(JSON.stringify(form)).not.toContain('Grace');
    const saved = await app.submit('customer', 'edit', { name: 'Taken', city: 'Nowhere' }, { id: '2' });
    expect(saved.ok).toBe(false);
    const grace = await engine.catalog.getEntity({
      entity_name: 'customers',
      operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 2 }] },
    });
    expect(grace.body.table.rows?.[0]?.[1]).toBe('Grace Hopper');
    const own = await app.screen('customer', { id: '1' });
    expect(JSON.stringify(own.rows.flat().find((c) => c.type === 'form'))).toContain('Ada Lovelace');
  });

  it('without app.use on the application, opening it is forbidden', async () => {
    const { engine } = await loadProject('examples/app');
    await expect(
      engine.as({ id: 'x', kind: 'user', roles: [] }).applications.open('invoices'),
    ).rejects.toMatchObject({
      code: 'forbidden',
      permission: 'app.use',
    });
  });
});
