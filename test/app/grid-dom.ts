// What a person sees of a rendered screen, read with a real HTML parser (htmlparser2): elements
// by tag, class and attribute, their text, and the grid's table as rows of cell texts.
import { DomUtils, parseDocument } from 'htmlparser2';
import type { Element } from 'domhandler';
import {
  Engine,
  MemorySpreadsheets,
  type AccessPolicy,
  type ApplicationBody,
  type CellValue,
  type Entity,
} from '../../src/index.js';

/** The parsed page. */
export function parse(html: string) {
  return parseDocument(html, { decodeEntities: true });
}

/** Every element named `tag` (and matching `where`, when given). */
export function all(html: string, tag: string, where: (e: Element) => boolean = () => true): Element[] {
  return DomUtils.findAll((e) => e.name === tag && where(e), parse(html).children);
}

/** The one element named `tag` matching `where`; throws unless there is exactly one. */
export function one(html: string, tag: string, where: (e: Element) => boolean = () => true): Element {
  const found = all(html, tag, where);
  if (found.length !== 1) throw new Error(`expected one <${tag}>, found ${found.length}`);
  return found[0]!;
}

/** Elements under `root` named `tag`. */
export function within(root: Element, tag: string, where: (e: Element) => boolean = () => true): Element[] {
  return DomUtils.findAll((e) => e.name === tag && where(e), root.children);
}

/** An attribute's value (entities decoded), or undefined. */
export function attr(e: Element, name: string): string | undefined {
  return DomUtils.getAttributeValue(e, name);
}

/** The tag name of the element's parent, when it is an element. */
export function parentTag(e: Element): string | undefined {
  return DomUtils.isTag(e.parent as Element) ? (e.parent as Element).name : undefined;
}

/** The element's text, entities decoded, whitespace as written. */
export function text(e: Element): string {
  return DomUtils.textContent(e);
}

/** Whether the element has `name` among its classes. */
export const hasClass = (name: string) => (e: Element) =>
  (attr(e, 'class') ?? '').split(/\s+/).includes(name);

/** The grid's table: header texts and each body row's cell texts. */
export function gridTable(html: string): { head: string[]; rows: string[][] } {
  const table = one(html, 'table', hasClass('grid'));
  return {
    head: within(table, 'th').map((th) => text(th).replace(/[▲▼↕]/g, '')),
    rows: within(table, 'tr')
      .filter((tr) => within(tr, 'td').length > 0)
      .map((tr) => within(tr, 'td').map(text)),
  };
}

/** A cell holding markup, a formula and a quote. */
export const HOSTILE_NAME = '<img src=x onerror=alert(1)>"&\'';

/** Customers: 45 rows; ids 1..45, names with a few ties, cities and balances. */
export function customerCells(): CellValue[][] {
  const rows: CellValue[][] = [['id', 'name', 'email', 'city', 'balance']];
  const cities = ['Berlin', 'Lisbon', 'Oslo'];
  for (let i = 1; i <= 45; i++)
    rows.push([i, `Customer ${String(i).padStart(2, '0')}`, `c${i}@example.com`, cities[i % 3]!, i * 10.5]);
  // Rows to search and sort by: a hostile name, a formula, a tie on name, a negative balance.
  rows[1] = [1, HOSTILE_NAME, 'ada@example.com', 'Berlin', 1234.5];
  rows[2] = [2, '=HYPERLINK("http://evil.example","x")', '+cmd@example.com', 'Lisbon', -20];
  rows[3] = [3, 'Zed', 'zed@example.com', 'Oslo', 5];
  rows[4] = [4, 'Zed', 'zed2@example.com', 'Oslo', 6];
  return rows;
}

export const customersEntity: Entity = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'email', type: 'STRING' },
    { name: 'city', type: 'STRING' },
    { name: 'balance', type: 'NUMBER' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'crm', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

/** The `crm` app: a list of customers linking to each one's screen, searchable, sortable, exported. */
export function crmApp(grid: Record<string, unknown> = {}): ApplicationBody {
  return {
    start_screen_url: 'customers',
    menu: [
      { label: 'Customers', url: '/screens/customers' },
      { label: 'Berlin', url: '/screens/customers?city=Berlin' },
      { label: 'Report', url: '/screens/report' },
    ],
    screens: [
      {
        url: 'customers',
        components: [
          [{ name: 'title', type: 'text', text: { contents: 'Customers', type: 'heading' } }],
          [
            {
              name: 'list',
              type: 'datagrid',
              datagrid: {
                entity_name: 'customers',
                page_size: 10,
                columns: [
                  { column: 'id', label: 'No.' },
                  { column: 'name', label: 'Name' },
                  { column: 'city', label: 'City' },
                  {
                    column: 'balance',
                    label: 'Balance',
                    format: { locale: 'de-DE', style: 'currency', currency: 'EUR' },
                  },
                ],
                row_action: {
                  type: 'redirect',
                  redirect_data: {
                    url: '/screens/customer?id={{row.id}}&name={{row.name}}&from={{query_params.city}}',
                  },
                },
                searchable: true,
                sortable: true,
                export: true,
                ...grid,
              },
            },
          ],
        ],
      },
      {
        url: 'customer',
        components: [
          [
            {
              name: 'who',
              type: 'text',
              text: { contents: 'Customer {{query_params.id}}', type: 'heading' },
            },
          ],
        ],
      },
      {
        url: 'report',
        components: [[{ name: 'r', type: 'text', text: { contents: 'Report', type: 'heading' } }]],
      },
    ],
  };
}

/** An engine with the customers and the `crm` app; `access` makes it check every call. */
export async function crmEngine(options: { grid?: Record<string, unknown>; access?: AccessPolicy } = {}) {
  const spreadsheets = new MemorySpreadsheets({ crm: { customers: customerCells() } });
  const engine = new Engine({ spreadsheets, ...(options.access ? { access: options.access } : {}) });
  await engine.catalog.registerEntity(customersEntity);
  await engine.applications.put('crm', crmApp(options.grid));
  return { engine, spreadsheets };
}
