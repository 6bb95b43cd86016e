// A grid's CSV export over HTTP: the view as the address makes it (search, sort, every page), the
// labels as headers, formulas neutralised, only what the viewer may read (its app, its rows, its
// columns), 404 where a grid does not export.
import { parse as parseCsv } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { csvCell } from '../../src/app/grid.js';
import type { AccessPolicy } from '../../src/index.js';
import { HOSTILE_NAME, crmEngine, customerCells } from './grid-dom.js';

const EXPORT = '/applications/crm/screens/customers/grids/list/export';

async function get(handler: (r: Request) => Promise<Response>, path: string, key?: string) {
  const response = await handler(
    new Request(`http://localhost${path}`, key ? { headers: { authorization: `Bearer ${key}` } } : {}),
  );
  // Response.text() would drop the byte order mark: the bytes are read as they came.
  const bytes = await response.arrayBuffer();
  return {
    response,
    status: response.status,
    text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes),
  };
}

/** The CSV's rows (its byte order mark left out). */
function rows(text: string): string[][] {
  expect(text.startsWith('\uFEFF')).toBe(true);
  return parseCsv(text.slice(1), { relax_column_count: true }) as string[][];
}

describe('grid export', () => {
  it('sends the searched and sorted view, every page, as a CSV attachment', async () => {
    const { engine } = await crmEngine();
    const handler = createHandler(engine);
    const sorted = await get(handler, `${EXPORT}?list_q=Zed&list_sort=id&list_dir=desc&list_page=3`);
    expect(sorted.status).toBe(200);
    expect(sorted.response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(sorted.response.headers.get('content-disposition')).toBe(
      `attachment; filename="list.csv"; filename*=UTF-8''list.csv`,
    );
    expect(sorted.text).toBe('\uFEFFNo.,Name,City,Balance\r\n4,Zed,Oslo,6\r\n3,Zed,Oslo,5\r\n');
    // Every page (the grid shows 10 a page), values unformatted.
    const everything = rows((await get(handler, EXPORT)).text);
    expect(everything).toHaveLength(46);
    expect(everything.slice(1).map((r) => r[0])).toEqual(
      customerCells()
        .slice(1)
        .map((r) => String(r[0])),
    );
    expect(everything[1]).toEqual(['1', HOSTILE_NAME, 'Berlin', '1234.5']);
  });

  it('neutralises text a spreadsheet would run as a formula, and keeps numbers as numbers', async () => {
    const { engine } = await crmEngine();
    const csv = rows((await get(createHandler(engine), `${EXPORT}?list_sort=id`)).text);
    expect(csv[2]).toEqual(['2', `'=HYPERLINK("http://evil.example","x")`, 'Lisbon', '-20']);
    expect(
      ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx', 'a,"b"', 'plain', 7, -7, null, true].map(csvCell),
    ).toEqual([
      "'=1+1",
      "'+1",
      "'-1",
      "'@SUM(A1)",
      "'\tx",
      `"'\rx"`,
      '"a,""b"""',
      'plain',
      '7',
      '-7',
      '',
      'true',
    ]);
    // The link on the page leads to the same view's CSV.
    const page = await (
      await createHandler(engine)(
        new Request('http://localhost/applications/crm/screens/customers?list_q=Zed&list_page=2'),
      )
    ).text();
    expect(page).toContain(`href="${EXPORT}?list_q=Zed" download>Download as CSV</a>`);
  });

  it('is a 404 page for a grid without export, or no such grid', async () => {
    const { engine } = await crmEngine({ grid: { export: false } });
    const handler = createHandler(engine);
    const page = await (
      await handler(new Request('http://localhost/applications/crm/screens/customers'))
    ).text();
    expect(page).not.toContain('Download as CSV');
    for (const path of [
      EXPORT,
      '/applications/crm/screens/customers/grids/nope/export',
      '/applications/crm/screens/nope/grids/list/export',
    ]) {
      const answer = await get(handler, path);
      expect(answer.status, path).toBe(404);
      expect(answer.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    }
  });

  it('exports only what the viewer may read: its app, its rows, its columns', async () => {
    const policy: AccessPolicy = {
      roles: {
        clerk: { grants: ['app.use:crm', 'entity.read:customers'] },
        stranger: { grants: ['entity.read:customers'] },
        viewer: { grants: ['app.use:crm'] },
        admin: { grants: ['*'] },
      },
      rows: [
        {
          entity: 'customers',
          roles: ['clerk'],
          filters: [{ column: 'city', operator: 'EQUALS', value: 'Oslo' }],
        },
      ],
      columns: [{ entity: 'customers', roles: ['clerk'], hidden: ['balance'] }],
    };
    const { engine } = await crmEngine({ access: policy });
    const handler = createHandler(engine);
    const key = async (role: string) => (await engine.keys.create({ name: role, roles: [role] })).secret;

    const clerk = await get(handler, `${EXPORT}?list_sort=id`, await key('clerk'));
    expect(clerk.status).toBe(200);
    const csv = rows(clerk.text);
    expect(csv[0]).toEqual(['No.', 'Name', 'City']);
    const oslo = customerCells()
      .slice(1)
      .filter((r) => r[3] === 'Oslo')
      .map((r) => [String(r[0]), String(r[1]), 'Oslo']);
    expect(csv.slice(1)).toEqual(oslo);
    expect(clerk.text).not.toContain('1234.5');

    // Without app.use on the app, or without reading its entity: refused, nothing sent.
    for (const role of ['stranger', 'viewer']) {
      const refused = await get(handler, EXPORT, await key(role));
      expect(refused.status, role).toBe(403);
      expect(refused.response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(refused.text).not.toContain('Customer 05');
    }
    // Without credentials: 401, as any API route.
    expect((await get(handler, EXPORT)).status).toBe(401);
    const admin = rows((await get(handler, EXPORT, await key('admin'))).text);
    expect(admin).toHaveLength(46);
    expect(admin[0]).toEqual(['No.', 'Name', 'City', 'Balance']);
  });
});
