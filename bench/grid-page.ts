/**
 * Benchmark of a screen's grid page over 100,000 rows: the screen resolved (`app.screen`) and
 * rendered as HTML (`renderScreen`), with a search in its address, timed against the entity read
 * that page needs (the same `CONTAINS` filter, sort and page through `engine.catalog.getEntity`), in
 * turns in the same run. The grid counts its rows ("Rows 101–200 of 1,234") with a second read of
 * the same filters (which takes the rows the first found). Every search looks for a term the round
 * before did not, so no read finds its scan remembered from another. Goal: the page in under 2x
 * the read. Also: the same page sorted by a column, and the page without a search (whose read is a
 * slice of the rows, so the page's fixed costs show there).
 *
 * Run: `npm run bench -- grid-page` or `npx tsx bench/grid-page.ts`.
 */
import { Engine, MemorySpreadsheets, renderScreen, type CellValue } from '../src/index.js';
import { check, checkEqual, printTable, sized, SMOKE } from './util.js';

const ROWS = sized(100_000, 500);
const PAGE = 100;
/** The page of the search shown: the second, when there is one. */
const SEARCH_PAGE = SMOKE ? 1 : 2;

/** Tags in the names: each search looks for one, found in 1 row of every `TAGS`. */
const TAGS = 50;

/** Customers: an id, a name (with one of the tags), a city, a balance. */
function customerRows(count: number): CellValue[][] {
  const rows: CellValue[][] = [['id', 'name', 'city', 'balance']];
  for (let i = 1; i <= count; i++)
    rows.push([i, `Customer ${i} tag${i % TAGS}x`, `City ${i % 500}`, (i * 7919) % 100_000]);
  return rows;
}

/** A search term no read of the last round used: the reads of one table remember their last scan. */
let round = 0;
const nextTag = () => `tag${round++ % TAGS}x`;

/** Resolves, renders and reads; prints the table and checks the page matches the read. */
export async function run(): Promise<void> {
  const spreadsheets = new MemorySpreadsheets({ bench: { customers: customerRows(ROWS) } });
  const engine = new Engine({ spreadsheets, limits: { maxPageSize: 1_000 } });
  try {
    await engine.catalog.registerEntity({
      name: 'customers',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'name', type: 'STRING' },
        { name: 'city', type: 'STRING' },
        { name: 'balance', type: 'NUMBER' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 'bench', sheet_name: 'customers', origin: { row: 0, col: 0 } },
    });
    await engine.applications.put('crm', {
      start_screen_url: 'list',
      screens: [
        {
          url: 'list',
          components: [
            [
              {
                name: 'people',
                type: 'datagrid',
                datagrid: {
                  entity_name: 'customers',
                  page_size: PAGE,
                  columns: [
                    { column: 'id', label: 'No.' },
                    { column: 'name', label: 'Name' },
                    { column: 'balance', label: 'Balance', format: { style: 'currency', currency: 'USD' } },
                  ],
                  row_action: { type: 'redirect', redirect_data: { url: '/screens/list?open={{row.id}}' } },
                  searchable: true,
                  sortable: true,
                },
              },
            ],
          ],
        },
      ],
    });
    const app = await engine.applications.open('crm');
    const searchRead = (tag = nextTag()) =>
      engine.catalog.getEntity({
        entity_name: 'customers',
        operation: {
          filters: [{ column: 'name', operator: 'CONTAINS', value_type: 'STRING', value: tag }],
        },
        page_size: PAGE,
        page_number: SEARCH_PAGE,
      });
    const sortedRead = () =>
      engine.catalog.getEntity({
        entity_name: 'customers',
        operation: { order_by: [{ column: 'balance', direction: 'DESC' }] },
        page_size: PAGE,
        page_number: 3,
      });
    const page = async (query: Record<string, string>) =>
      renderScreen('crm', await app.screen('list', query));
    const searched = () => ({ people_q: nextTag(), people_page: String(SEARCH_PAGE) });
    const sorted = { people_sort: 'balance', people_dir: 'desc', people_page: '3' };

    // The page shows what the read gives, and says how many rows match.
    const read = await searchRead('tag7x');
    const html = await page({ people_q: 'tag7x', people_page: String(SEARCH_PAGE) });
    const first = read.body.table.rows?.[0]?.[0];
    check(first !== undefined, 'the search read finds rows');
    check(html.includes(`>${String(first)}</a>`), 'the page links the first row the read gives');
    const matches = Math.floor(ROWS / TAGS);
    const from = (SEARCH_PAGE - 1) * PAGE;
    const shown = `Rows ${from + 1}–${Math.min(from + PAGE, matches)} of ${matches.toLocaleString('en-US')}`;
    checkEqual(html.includes(shown), true, `the pager says "${shown}"`);
    const sortedHtml = await page(sorted);
    const top = (await sortedRead()).body.table.rows?.[0]?.[0];
    check(sortedHtml.includes(`>${String(top)}</a>`), 'the sorted page starts where the sorted read does');

    const timed = await timedMedians({
      'search: read': searchRead,
      'search: screen + HTML': () => page(searched()),
      'sort: read': sortedRead,
      'sort: screen + HTML': () => page(sorted),
      'no search: read': () =>
        engine.catalog.getEntity({ entity_name: 'customers', operation: {}, page_size: PAGE }),
      'no search: screen + HTML': () => page({}),
    });
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    const row = (what: string, goal: boolean) => {
      const pageMs = timed[`${what}: screen + HTML`]!;
      const readMs = timed[`${what}: read`]!;
      const verdict = !goal ? '(no goal)' : pageMs <= 2 * readMs || SMOKE ? 'met' : 'NOT met';
      return [what, pageMs.toFixed(2), readMs.toFixed(2), ratio(pageMs, readMs), verdict];
    };
    printTable(
      `A grid page of ${PAGE} rows over ${ROWS.toLocaleString('en-US')} rows (median ms, in turns)`,
      ['page', 'screen + HTML', 'the read', 'ratio', 'goal <= 2x'],
      [row('search', true), row('sort', false), row('no search', false)],
    );
  } finally {
    await engine.close();
  }
}

/** `medians` for async functions: each call awaited, in turns. */
async function timedMedians(fns: Record<string, () => Promise<unknown>>): Promise<Record<string, number>> {
  const [runs, warmup] = SMOKE ? [1, 0] : [15, 3];
  const names = Object.keys(fns);
  const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < warmup + runs; i++)
    for (let n = 0; n < names.length; n++) {
      const name = names[(n + i) % names.length]!;
      const start = performance.now();
      await fns[name]!();
      if (i >= warmup) times[name]!.push(performance.now() - start);
    }
  return Object.fromEntries(
    names.map((name) => {
      const sorted = times[name]!.sort((a, b) => a - b);
      return [name, sorted[Math.floor(sorted.length / 2)]!];
    }),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
