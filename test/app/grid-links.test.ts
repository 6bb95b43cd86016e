// Grids as a person sees them: each row's key is a link to the row's screen (its values URL-encoded
// as redirects are), cells under their labels and in their formats, hostile values shown as text,
// an empty grid saying so, and the labels each cell carries for the card layout of narrow screens.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { renderScreen } from '../../src/index.js';
import { SCREEN_STYLES } from '../../src/app/styles.js';
import { HOSTILE_NAME, all, attr, crmEngine, gridTable, hasClass, one, text, within } from './grid-dom.js';

async function page(path: string, grid?: Record<string, unknown>) {
  const { engine } = await crmEngine(grid ? { grid } : {});
  const handler = createHandler(engine);
  const response = await handler(new Request(`http://localhost${path}`));
  return { status: response.status, html: await response.text(), handler, engine };
}

const euros = (n: number) => new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(n);

describe('grid rows as links', () => {
  it("makes each row's key a real link to the row's screen, its values URL-encoded", async () => {
    const { status, html, handler } = await page('/applications/crm/screens/customers?city=Ber%26lin');
    expect(status).toBe(200);
    const rows = all(html, 'tr', hasClass('linked'));
    expect(rows.length).toBe(10);
    const first = within(rows[0]!, 'td');
    const link = one(html, 'a', (a) => hasClass('row-link')(a) && text(a) === '1');
    expect(within(first[0]!, 'a').length).toBe(1);
    expect(text(within(first[0]!, 'a')[0]!)).toBe('1');
    expect(attr(within(first[0]!, 'a')[0]!, 'href')).toBe(attr(link, 'href'));
    expect(attr(link, 'href')).toBe(
      `/applications/crm/screens/customer?id=1&name=${encodeURIComponent(HOSTILE_NAME)}&from=Ber%26lin`,
    );
    // Only the key's cell holds the link; the others are text.
    expect(first.slice(1).flatMap((td) => within(td, 'a')).length).toBe(0);
    // The hostile name is text in its cell, never markup.
    expect(text(first[1]!)).toBe(HOSTILE_NAME);
    expect(all(html, 'img').length).toBe(0);
    // Following the link opens the row's screen.
    const opened = await handler(new Request(`http://localhost${attr(link, 'href')!}`));
    expect(opened.status).toBe(200);
    expect(text(one(await opened.text(), 'h1'))).toBe('Customer 1');
  });

  it('links from the first shown column when the key is not shown, and not at all without row_action', async () => {
    const noKey = await page('/applications/crm/screens/customers', {
      columns: [{ column: 'name' }, { column: 'city' }],
    });
    const row = all(noKey.html, 'tr', hasClass('linked'))[0]!;
    expect(within(within(row, 'td')[0]!, 'a').map((a) => attr(a, 'href'))).toEqual([
      `/applications/crm/screens/customer?id=1&name=${encodeURIComponent(HOSTILE_NAME)}&from=`,
    ]);
    const plain = await page('/applications/crm/screens/customers', { row_action: undefined });
    expect(all(plain.html, 'a', hasClass('row-link')).length).toBe(0);
    expect(all(plain.html, 'tr', hasClass('linked')).length).toBe(0);
  });

  it('shows the columns under their labels, in their formats, each cell carrying its label', async () => {
    const { html } = await page('/applications/crm/screens/customers');
    const table = gridTable(html);
    expect(table.head).toEqual(['No.', 'Name', 'City', 'Balance']);
    expect(table.rows[0]).toEqual(['1', HOSTILE_NAME, 'Berlin', euros(1234.5)]);
    expect(table.rows[1]).toEqual(['2', '=HYPERLINK("http://evil.example","x")', 'Lisbon', euros(-20)]);
    const cells = within(all(html, 'tr', hasClass('linked'))[0]!, 'td');
    expect(cells.map((td) => attr(td, 'data-label'))).toEqual(['No.', 'Name', 'City', 'Balance']);
    // A narrow screen shows each row as a card, each cell after its label.
    expect(SCREEN_STYLES).toMatch(
      /@media \(max-width: 40rem\)[\s\S]*td::before \{ content: attr\(data-label\)/,
    );
  });

  it('says what an empty grid holds: its empty_text, else a default', async () => {
    const none = { operation: { filters: [{ column: 'city', operator: 'EQUALS', value: 'Nowhere' }] } };
    const own = await page('/applications/crm/screens/customers', {
      ...none,
      empty_text: 'No <b>customers</b> yet.',
    });
    expect(text(one(own.html, 'td', hasClass('empty')))).toBe('No <b>customers</b> yet.');
    expect(all(own.html, 'b').length).toBe(0);
    expect(all(own.html, 'nav', hasClass('pager')).length).toBe(0);
    const fallback = await page('/applications/crm/screens/customers', none);
    expect(text(one(fallback.html, 'td', hasClass('empty')))).toBe('There is nothing to show here yet.');
  });

  it('resolves the grid for renderScreen callers with the same links, labels and cells', async () => {
    const { engine } = await crmEngine();
    const app = await engine.applications.open('crm');
    const screen = await app.screen('customers', { list_page: '5' });
    const grid = screen.rows[1]![0]!;
    if (grid.type !== 'datagrid') throw new Error('expected the grid');
    expect(grid).toMatchObject({
      page: 5,
      total: 45,
      labels: ['No.', 'Name', 'City', 'Balance'],
      linkColumn: 0,
    });
    expect(grid.rowHrefs[0]).toBe('/screens/customer?id=41&name=Customer%2041&from=');
    expect(grid.cells[0]).toEqual(['41', 'Customer 41', 'Oslo', euros(430.5)]);
    const html = renderScreen('crm', screen, { basePath: '/api' });
    const link = one(html, 'a', (a) => hasClass('row-link')(a) && text(a) === '41');
    expect(attr(link, 'href')).toBe('/api/applications/crm/screens/customer?id=41&name=Customer%2041&from=');
  });
});
