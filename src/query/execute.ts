/**
 * The entity read (`get_entity`): filters, then grouping and aggregates when asked, then ordering,
 * then the page, over an {@link EntityTable}. Reads never copy the table: they narrow a list of row indexes and materialize
 * only the page's rows and the selected columns.
 * @module
 */
import { formatIssue } from '../errors/index.js';
import type { Column } from '../schema/data-table.js';
import type { EntityColumn } from '../schema/entity.js';
import { GetEntityInputSchema, type GetEntityInput, type GetEntityOutput } from '../schema/get-entity.js';
import { check, type CheckResult } from '../schema/issues.js';
import { groupedPage } from './aggregate.js';
import { cellOf, type EntityTable } from './entity-table.js';
import { compileFilter } from './filters.js';
import { columnIndex, rowsHolding } from './hash-index.js';
import { compileOrder, firstRows } from './order.js';
import { planRead, type FilterPlan, type GroupPlan, type ReadLimits, type ReadPlan } from './plan.js';

/** How a read may run. @internal */
export interface ReadOptions {
  /** Whether `EQUALS` / `IN` filters may use the columns' hash indexes (same rows either way). @default true */
  indexes?: boolean;
  /**
   * Row rules of the access policy: only rows matching every filter of one of the rules are read
   * (filters as in `get_entity`, values already the principal's). A rule that cannot be planned (a
   * column the entity lacks, a value its column cannot hold) matches no row. Absent: every row.
   */
  rules?: readonly (readonly unknown[])[] | undefined;
}

/** The `get_entity` output for a read that failed: every problem listed, table columns and rows null. */
export function readFailure(errors: string[]): GetEntityOutput {
  return { body: { table: { columns: null, rows: null }, error: { is_error: true, errors } } };
}

/**
 * Output column of an entity column, named `name`: the config of its type (`number`, `string`, ...),
 * a `NUMBER` column's with the entity's own rules (`min`, `max`, `step`, `latin_numbering`) when it
 * has them. @internal
 */
export function outputColumn(name: string, column: Pick<EntityColumn, 'type' | 'number'>): Column {
  switch (column.type) {
    case 'NUMBER': {
      const { latin_numbering = true, ...rules } = column.number ?? {};
      return { name, type: 'NUMBER', number: { latin_numbering, ...rules } };
    }
    case 'STRING':
      return { name, type: 'STRING', string: { is_json: false, is_url: false } };
    case 'BOOLEAN':
      return { name, type: 'BOOLEAN', boolean: {} };
    case 'DATE':
      return { name, type: 'DATE', date: {} };
    case 'DATETIME':
      return { name, type: 'DATETIME', datetime: {} };
  }
}

/** Read inputs made from a value their maker checked already (see {@link checkedRead}). */
const CHECKED = new WeakSet<object>();

/**
 * Marks a read input built from values already checked (the HTTP read route's body, checked against
 * `ReadEntityBodySchema`, with a non-empty entity name): {@link executeRead} does not check it again.
 * The input must not change afterwards. @internal
 */
export function checkedRead<T extends object>(input: T): T {
  CHECKED.add(input);
  return input;
}

/**
 * Runs a `get_entity` read over an entity's table. `input` is checked strictly (no other properties
 * at any level), then against the entity's columns. Bad input never throws: the output then has
 * `body.error.is_error` true and one message per problem, each naming its field path. An `EQUALS` or
 * `IN` filter on a number or text column is answered from the column's hash index (built on first
 * use, kept with the table; see `hash-index.ts`) unless `options.indexes` is false: same rows.
 * With `group_by` or `aggregates` the kept rows are grouped (see `aggregate.ts`) and the groups
 * ordered and paged instead.
 * @example
 * ```ts
 * executeRead('orders', table, {
 *   entity_name: 'orders',
 *   operation: { filters: [{ column: 'total', operator: 'GREATER_THAN', value: 100 }], order_by: [{ column: 'total', direction: 'DESC' }] },
 *   page_size: 10,
 * }, { maxPageSize: 10_000, defaultPageSize: 100 });
 * ```
 */
export function executeRead(
  entityName: string,
  table: EntityTable,
  input: unknown,
  limits: ReadLimits,
  options: ReadOptions = {},
): GetEntityOutput {
  const shape: CheckResult<GetEntityInput> =
    typeof input === 'object' && input !== null && CHECKED.has(input)
      ? { ok: true, value: input as GetEntityInput }
      : check(GetEntityInputSchema, input);
  if (!shape.ok) return readFailure(shape.issues.map(formatIssue));
  const planned = planRead(entityName, table.columns, shape.value, limits);
  if (!planned.ok) return readFailure(planned.errors);
  const plan = planned.plan;
  const rules = options.rules && planRules(entityName, table, options.rules, limits);
  const indexes = options.indexes ?? true;
  if (plan.group) {
    // Counting every row needs no pass over them.
    const all = !rules && plan.filters.length === 0;
    const { idx, n } =
      all && countsOnly(plan.group)
        ? { idx: new Uint32Array(0), n: table.length }
        : rules
          ? rules.length === 1
            ? matching(table, [...rules[0]!, ...plan.filters], indexes)
            : matching(table, plan.filters, indexes, ruledRows(table, rules, indexes))
          : matching(table, plan.filters, indexes);
    const grouped = groupedPage(table, plan.group, idx, n, plan, outputColumn);
    return { body: { table: grouped, error: { is_error: false, errors: [] } } };
  }
  const page = rules
    ? rules.length === 1
      ? pageRows(table, { ...plan, filters: [...rules[0]!, ...plan.filters] }, indexes)
      : pageRows(table, plan, indexes, ruledRows(table, rules, indexes))
    : pageRows(table, plan, indexes);
  const columns = plan.select.map((item) => outputColumn(item.name, table.columns[item.column]!));
  const selected = plan.select.map((item) => table.data[item.column]!);
  const rows: unknown[][] = new Array<unknown[]>(page.length);
  for (let r = 0; r < page.length; r++) {
    const i = page[r]!;
    const row = new Array<unknown>(selected.length);
    for (let c = 0; c < selected.length; c++) row[c] = cellOf(selected[c]!, i);
    rows[r] = row;
  }
  return { body: { table: { columns, rows }, error: { is_error: false, errors: [] } } };
}

/**
 * Rules planned, by the rules list: a principal's rules are one array for as long as its grants are
 * kept, so a read under them plans them once per table columns, not once per read.
 */
const PLANNED = new WeakMap<object, { columns: EntityTable['columns']; planned: FilterPlan[][] }>();

/** The filters of each row rule, planned against the table; the rules that cannot be planned left out. */
function planRules(
  entityName: string,
  table: EntityTable,
  rules: readonly (readonly unknown[])[],
  limits: ReadLimits,
): FilterPlan[][] {
  const known = PLANNED.get(rules);
  if (known?.columns === table.columns) return known.planned;
  const planned: FilterPlan[][] = [];
  for (const filters of rules) {
    const input = { entity_name: entityName, operation: { filters } };
    const shape = check(GetEntityInputSchema, input);
    if (!shape.ok) continue;
    const plan = planRead(entityName, table.columns, shape.value, limits);
    if (plan.ok) planned.push(plan.plan.filters);
  }
  PLANNED.set(rules, { columns: table.columns, planned });
  return planned;
}

/**
 * The rows matching one of several rules, in ascending order, as a mark per row: each rule's rows
 * found as a read's are (an index on a key or equality column, else a scan).
 */
function ruledRows(table: EntityTable, rules: readonly FilterPlan[][], indexes: boolean): Uint8Array {
  const marked = new Uint8Array(table.length);
  for (const filters of rules) {
    const { idx, n } = matching(table, filters, indexes);
    for (let j = 0; j < n; j++) marked[idx[j]!] = 1;
  }
  return marked;
}

/** Whether a grouping only counts rows (no group columns, every aggregate a `count` of rows). */
function countsOnly(group: GroupPlan): boolean {
  return group.by.length === 0 && group.aggregates.every((a) => a.fn === 'count' && a.column < 0);
}

/**
 * The rows the last scan of each table matched, by its filters: a grid counts its rows and then
 * reads its page with the same filters, and pages through them; the second read takes the rows of
 * the first instead of scanning again. Tables never change their rows (a write makes a new table
 * object), so what a scan of one found stays true.
 */
const lastScan = new WeakMap<EntityTable, { key: string; idx: Uint32Array }>();

/** The rows matching every filter: `idx[0..n)`, ascending (a copy the caller may reorder). */
function matching(
  table: EntityTable,
  filters: readonly FilterPlan[],
  indexes: boolean,
  marked?: Uint8Array,
): { idx: Uint32Array; n: number } {
  const key = marked || filters.length === 0 ? undefined : JSON.stringify([indexes, filters]);
  const last = key === undefined ? undefined : lastScan.get(table);
  if (last && last.key === key) return { idx: last.idx.slice(), n: last.idx.length };
  const found = scan(table, filters, indexes, marked);
  if (key !== undefined) lastScan.set(table, { key, idx: found.idx.slice(0, found.n) });
  return found;
}

/** The rows matching every filter, found by an index and a pass over the rows. */
function scan(
  table: EntityTable,
  filters: readonly FilterPlan[],
  indexes: boolean,
  marked?: Uint8Array,
): { idx: Uint32Array; n: number } {
  const driver = indexes ? indexedFilter(table, filters) : undefined;
  let idx: Uint32Array;
  let n: number;
  if (driver) {
    idx = rowsHolding(columnIndex(table, driver.column), driver.values, table.length);
    n = idx.length;
  } else if (marked) {
    idx = new Uint32Array(table.length);
    n = 0;
    for (let i = 0; i < marked.length; i++) if (marked[i] === 1) idx[n++] = i;
  } else {
    idx = new Uint32Array(table.length);
    for (let i = 0; i < idx.length; i++) idx[i] = i;
    n = idx.length;
  }
  if (driver && marked) {
    let k = 0;
    for (let j = 0; j < n; j++) if (marked[idx[j]!] === 1) idx[k++] = idx[j]!;
    n = k;
  }
  for (const filter of filters) {
    if (n === 0) break;
    if (filter === driver?.filter) continue;
    n = compileFilter(table.data[filter.column]!, filter)(idx, n);
  }
  return { idx, n };
}

/** The rows of `table` (by index) that match one of `rules`. @internal */
export function rowsMatchingRules(
  entityName: string,
  table: EntityTable,
  rules: readonly (readonly unknown[])[],
  limits: ReadLimits,
  candidates: readonly number[],
): Set<number> {
  const planned = planRules(entityName, table, rules, limits);
  const found = new Set<number>();
  if (planned.length === 0 || candidates.length === 0) return found;
  for (const filters of planned) {
    const idx = Uint32Array.from(candidates);
    let n = idx.length;
    for (const filter of filters) {
      if (n === 0) break;
      n = compileFilter(table.data[filter.column]!, filter)(idx, n);
    }
    for (let j = 0; j < n; j++) found.add(idx[j]!);
  }
  return found;
}

/**
 * Row indexes of the requested page, in output order; with `marked`, only rows marked 1 there
 * (the rows a principal's rules let it see).
 */
function pageRows(
  table: EntityTable,
  plan: ReadPlan,
  indexes: boolean,
  marked?: Uint8Array,
): ArrayLike<number> {
  const offset = (plan.pageNumber - 1) * plan.pageSize;
  const end = offset + plan.pageSize;
  if (offset >= table.length) return [];
  if (!marked && plan.filters.length === 0 && plan.order.length === 0) {
    const last = Math.min(end, table.length);
    const out = new Uint32Array(last - offset);
    for (let i = 0; i < out.length; i++) out[i] = offset + i;
    return out;
  }
  const { idx, n } = matching(table, plan.filters, indexes, marked);
  if (offset >= n) return [];
  if (plan.order.length === 0) return idx.subarray(offset, Math.min(end, n));
  const compare = compileOrder(
    plan.order.map((key) => ({ data: table.data[key.column]!, descending: key.descending })),
  );
  return firstRows(idx, n, end, compare).subarray(offset);
}

/**
 * The `EQUALS` or `IN` filter on a number or text column whose index gives the fewest rows, or
 * `undefined` when there is none. Its rows are then the candidates the other filters narrow.
 * `BOOLEAN` columns are left to the scan: an index would not narrow them much.
 */
function indexedFilter(
  table: EntityTable,
  filters: readonly FilterPlan[],
): { filter: FilterPlan; column: number; values: readonly unknown[] } | undefined {
  let best: { filter: FilterPlan; column: number; values: readonly unknown[] } | undefined;
  let fewest = Infinity;
  for (const filter of filters) {
    if (table.data[filter.column] instanceof Uint8Array) continue;
    let values: readonly unknown[];
    if (filter.operator === 'IN') values = filter.list;
    else if (filter.operator === 'EQUALS' && filter.value !== null) values = [filter.value];
    else continue;
    const index = columnIndex(table, filter.column);
    let count = 0;
    for (const value of values) count += index.count(value);
    if (count < fewest) {
      best = { filter, column: filter.column, values };
      fewest = count;
      if (count === 0) break;
    }
  }
  return best;
}
