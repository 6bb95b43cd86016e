// Searching, sorting and paging a grid, all in the address: a search is a case-sensitive CONTAINS
// over the shown text columns (one column, several with a one-column key, several with a
// composite key: the same rows), a sort link per header with aria-sort on the sorted one and
// ties kept in sheet order, "Rows 11–20 of 45" with previous and next, each link keeping the rest.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import {
  all,
  attr,
  crmEngine,
  customerCells,
  customersEntity,
  gridTable,
  hasClass,
  one,
  text,
  parentTag,
} from './grid-dom.js';

async function open(grid: Record<string, unknown> = {}, entity = customersEntity) {
  const { engine, spreadsheets } = await crmEngine({ grid });
  if (entity !== customersEntity) await engine.catalog.upsertEntity(entity);
  const handler = createHandler(engine);
  return {
    spreadsheets,
    get: async (query: string) => {
      const response = await handler(
        new Request(`http://localhost/applications/crm/screens/customers${query}`),
      );
      expect(response.status).toBe(200);
      return response.text();
    },
  };
}

/** The ids of a page's rows. */
const ids = (html: string) =>
  gridTable(html)
    .rows.filter((r) => r.length > 1)
    .map((r) => Number(r[0]));
/** The query of a link, as pairs. */
const paramsOf = (href: string | undefined) => Object.fromEntries(new URL(href!, 'http://x').searchParams);
const status = (html: string) => text(one(html, 'span', hasClass('status')));

/** The rows a CONTAINS of `q` over name and city finds, in sheet order: what a search must show. */
function expected(q: string): number[] {
  return customerCells()
    .slice(1)
    .filter((r) => String(r[1]).includes(q) || String(r[3]).includes(q))
    .map((r) => Number(r[0]));
}

describe('grid search', () => {
  it('finds the rows whose shown text columns contain the text, counted and paged', async () => {
    const { get } = await open();
    const html = await get('?list_q=Berlin&city=Oslo');
    const found = expected('Berlin');
    expect(found.length).toBe(15);
    expect(ids(html)).toEqual(found.slice(0, 10));
    expect(status(html)).toBe('Rows 1–10 of 15');
    // The form sends the text again with the screen's other parameters.
    const form = one(html, 'form', hasClass('grid-search'));
    expect(attr(form, 'method')).toBe('get');
    expect(attr(form, 'action')).toBe('/applications/crm/screens/customers');
    expect(
      attr(
        one(html, 'input', (i) => attr(i, 'type') === 'search'),
        'value',
      ),
    ).toBe('Berlin');
    expect(
      attr(
        one(html, 'input', (i) => attr(i, 'type') === 'search'),
        'name',
      ),
    ).toBe('list_q');
    expect(
      all(html, 'input', (i) => attr(i, 'type') === 'hidden').map((i) => [attr(i, 'name'), attr(i, 'value')]),
    ).toEqual([['city', 'Oslo']]);
    expect(text(one(html, 'label', (l) => attr(l, 'for') === 's-list'))).toBe('Search customers');
    const next = attr(
      one(html, 'a', (a) => attr(a, 'rel') === 'next'),
      'href',
    );
    expect(paramsOf(next)).toEqual({ list_q: 'Berlin', city: 'Oslo', list_page: '2' });
    expect(ids(await get(`?${new URL(next!, 'http://x').searchParams}`))).toEqual(found.slice(10));
  });

  it('is case-sensitive, as CONTAINS is, and says when nothing matches', async () => {
    const { get } = await open();
    const html = await get('?list_q=berlin');
    expect(gridTable(html).rows).toEqual([['Nothing matches “berlin”.']]);
    expect(all(html, 'a', hasClass('grid-clear')).map((a) => attr(a, 'href'))).toEqual([
      '/applications/crm/screens/customers',
    ]);
  });

  it('searches one text column with one filter, and several columns alike whatever the key', async () => {
    const one_ = await open({ columns: [{ column: 'id' }, { column: 'name' }, { column: 'balance' }] });
    expect(ids(await one_.get('?list_q=Zed'))).toEqual([3, 4]);
    // A text in a column not shown is not searched.
    expect(ids(await one_.get('?list_q=Berlin'))).toEqual([]);
    const composite = { ...customersEntity, primary_key: ['id', 'email'] };
    for (const entity of [customersEntity, composite]) {
      const { get } = await open({ page_size: 50 }, entity);
      for (const q of ['Zed', 'o', '"', 'Customer 1'])
        expect(
          ids(await get(`?list_q=${encodeURIComponent(q)}`)),
          `${q} (key ${entity.primary_key.join(', ')})`,
        ).toEqual(expected(q));
    }
  });
});

describe('grid sort', () => {
  it('sorts by a header link, marks the sorted header with aria-sort, keeps ties in sheet order', async () => {
    const { get } = await open({ page_size: 50 });
    const unsorted = await get('');
    expect(all(unsorted, 'th', (th) => attr(th, 'aria-sort') !== undefined).length).toBe(0);
    const nameLink = one(unsorted, 'a', (a) => parentTag(a) === 'th' && text(a).startsWith('Name'));
    expect(paramsOf(attr(nameLink, 'href'))).toEqual({ list_sort: 'name', list_dir: 'asc' });

    const ascending = await get('?list_sort=name&list_dir=asc');
    const sorted = one(ascending, 'th', (th) => attr(th, 'aria-sort') !== undefined);
    expect([text(sorted).replace(/[▲▼]/g, ''), attr(sorted, 'aria-sort')]).toEqual(['Name', 'ascending']);
    const names = customerCells()
      .slice(1)
      .map((r) => ({ id: Number(r[0]), name: String(r[1]) }));
    const byName = (dir: number) =>
      [...names].sort((a, b) => (a.name < b.name ? -dir : a.name > b.name ? dir : 0)).map((r) => r.id);
    expect(ids(ascending)).toEqual(byName(1));
    // The next click on the same header sorts the other way.
    const again = one(ascending, 'a', (a) => parentTag(a) === 'th' && text(a).startsWith('Name'));
    expect(paramsOf(attr(again, 'href'))).toEqual({ list_sort: 'name', list_dir: 'desc' });
    const descending = await get('?list_sort=name&list_dir=desc');
    expect(
      attr(
        one(descending, 'th', (th) => attr(th, 'aria-sort') !== undefined),
        'aria-sort',
      ),
    ).toBe('descending');
    // Stable: the two "Zed" rows (3, then 4) keep their order both ways.
    expect(ids(descending)).toEqual(byName(-1));
    expect(ids(descending).indexOf(3)).toBeLessThan(ids(descending).indexOf(4));
    // Numbers sort as numbers.
    expect(ids(await get('?list_sort=balance&list_dir=desc')).slice(0, 3)).toEqual([1, 45, 44]);
  });

  it('ignores a sort by a column the grid does not show, and has no links when not sortable', async () => {
    const { get } = await open({ page_size: 50 });
    const html = await get('?list_sort=email&list_dir=desc');
    expect(ids(html).slice(0, 3)).toEqual([1, 2, 3]);
    expect(all(html, 'th', (th) => attr(th, 'aria-sort') !== undefined).length).toBe(0);
    const plain = await open({ sortable: false });
    const still = await plain.get('?list_sort=name&list_dir=desc');
    expect(ids(still).slice(0, 3)).toEqual([1, 2, 3]);
    expect(all(still, 'a', (a) => parentTag(a) === 'th').length).toBe(0);
  });
});

describe('grid pages', () => {
  it('shows "Rows 11–20 of 45" with previous and next, every link keeping search and sort', async () => {
    const { get } = await open();
    const first = await get('?list_sort=id&list_dir=desc&city=Oslo');
    expect(status(first)).toBe('Rows 1–10 of 45');
    expect(
      one(first, 'span', (s) => attr(s, 'aria-disabled') === 'true' && text(s) === 'Previous'),
    ).toBeDefined();
    const second = await get('?list_sort=id&list_dir=desc&city=Oslo&list_page=2');
    expect(status(second)).toBe('Rows 11–20 of 45');
    expect(ids(second)).toEqual([35, 34, 33, 32, 31, 30, 29, 28, 27, 26]);
    expect(
      paramsOf(
        attr(
          one(second, 'a', (a) => attr(a, 'rel') === 'prev'),
          'href',
        ),
      ),
    ).toEqual({
      list_sort: 'id',
      list_dir: 'desc',
      city: 'Oslo',
    });
    expect(
      paramsOf(
        attr(
          one(second, 'a', (a) => attr(a, 'rel') === 'next'),
          'href',
        ),
      ),
    ).toEqual({
      list_sort: 'id',
      list_dir: 'desc',
      city: 'Oslo',
      list_page: '3',
    });
    // A header link starts its order on the first page and keeps the rest.
    const header = one(second, 'a', (a) => parentTag(a) === 'th' && text(a).startsWith('City'));
    expect(paramsOf(attr(header, 'href'))).toEqual({ list_sort: 'city', list_dir: 'asc', city: 'Oslo' });
    const last = await get('?list_page=5');
    expect(status(last)).toBe('Rows 41–45 of 45');
    expect(all(last, 'a', (a) => attr(a, 'rel') === 'next').length).toBe(0);
    const beyond = await get('?list_page=9');
    expect(gridTable(beyond).rows).toEqual([['No rows on this page.']]);
    expect(status(beyond)).toBe('No rows here; the list has 45');
  });

  it('counts thousands as the page says them', async () => {
    const { get, spreadsheets } = await open({ page_size: 100 });
    const rows = customerCells().slice(0, 1);
    for (let i = 1; i <= 1234; i++) rows.push([i, `C${i}`, `c${i}@example.com`, 'Oslo', i]);
    spreadsheets.setSheet('crm', 'customers', rows);
    expect(status(await get('?list_page=2'))).toBe('Rows 101–200 of 1,234');
  });
});
