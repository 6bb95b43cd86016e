// A grid's config checked against its entity when the application is stored: the columns it shows,
// the {{row.x}} of its row links and its formats name what its read has.
import { describe, expect, it } from 'vitest';
import { isValidationError } from '../../src/index.js';
import { crmApp, crmEngine } from './grid-dom.js';

async function issuesOf(grid: Record<string, unknown>) {
  const { engine } = await crmEngine();
  const error = await engine.applications.put('crm', crmApp(grid)).catch((e: unknown) => e);
  expect(isValidationError(error)).toBe(true);
  return (error as { issues: { code: string; path: string; message: string }[] }).issues;
}

const at = 'screens[0].components[1][0].datagrid';

describe('grid checks', () => {
  it('names a shown column, a row link column and a format the grid cannot have', async () => {
    const issues = await issuesOf({
      columns: [{ column: 'nam' }, { column: 'balance', format: { style: 'currency' } }],
      row_action: { type: 'redirect', redirect_data: { url: '/screens/customer?id={{row.ident}}' } },
    });
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['unknown_column', `${at}.columns[0].column`],
      ['invalid_value', `${at}.columns[1].format`],
      ['unknown_column', `${at}.row_action.redirect_data.url`],
    ]);
    expect(issues[0]!.message).toBe(
      'grid "list" shows column "nam", which its read does not have (columns: id, name, email, city, balance)',
    );
  });

  it('takes the names a grid selects under, and still checks its operation against the entity', async () => {
    const { engine } = await crmEngine();
    const selected = crmApp({
      operation: { select_columns: [{ column: 'id' }, { column: 'name', alias: 'who' }] },
      columns: [{ column: 'id' }, { column: 'who' }],
      row_action: {
        type: 'redirect',
        redirect_data: { url: '/screens/customer?id={{row.id}}&n={{row.who}}' },
      },
    });
    await expect(engine.applications.put('crm', selected)).resolves.toMatchObject({ created: false });
    const issues = await issuesOf({ operation: { order_by: [{ column: 'age', direction: 'ASC' }] } });
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['unknown_column', `${at}.operation.order_by[0].column`],
    ]);
  });
});
