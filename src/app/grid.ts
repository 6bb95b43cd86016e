/**
 * A `datagrid` resolved for display: one page of its entity, read with its `operation` (filter
 * values taking `{{query_params.x}}` from the screen's address), searched, sorted and counted as
 * the address says (`<grid>_q`, `<grid>_sort`, `<grid>_dir`, `<grid>_page`), with the links to the
 * pages around it, to each row and to the CSV of the view.
 * @module
 */
import type { Column, Component, Entity, Operation, Screen } from '../schema/index.js';
import { parseRedirectUrl } from '../schema/index.js';
import { DEFAULT_GRID_ROWS } from '../schema/grid-rows.js';
import { isStepwireError, type Issue } from '../errors/index.js';
import { makeFormatter, type ValueFormatter } from '../pdf/value-format.js';
import type { AppHost } from './host.js';
import { fillQueryValue, resolveRedirect } from './redirect.js';
import type { GridSearch, ResolvedDatagrid, ScreenQuery } from './types.js';

/** Highest grid page number read from a query string; a higher one, like any other bad value, is page 1. */
const MAX_GRID_PAGE = 1_000_000;

/** Longest search text taken from the address; a longer one is cut. */
const MAX_SEARCH_LENGTH = 200;

/**
 * Most rows a grid's view may hold to be exported, and most rows a search over several columns
 * may match: beyond, the export is refused and the search asks for more precise words.
 * @internal
 */
export const MAX_VIEW_ROWS = 100_000;

/** What grids need of the engine: reads, definitions and the page-size limit. @internal */
export interface GridHost {
  readonly catalog: Pick<AppHost['catalog'], 'getEntity' | 'getDefinition'>;
  readonly options: { readonly limits: { readonly maxPageSize: number } };
}

type Datagrid = Extract<Component, { type: 'datagrid' }>;

/** The rows of one read: its columns and rows, or what a person is told when it failed. */
type Table = { columns: Column[]; rows: unknown[][]; error: null } | { error: string };

/** A column of the read's table that the grid shows. */
interface Shown {
  /** Its name in the read's table. */
  name: string;
  /** The entity column it comes from (for filters and order), when known. */
  source: string | undefined;
  label: string;
  formatter: ValueFormatter | undefined;
}

/** What the address asks of a grid, checked against what the grid may do. */
interface GridState {
  page: number;
  /** The search text, trimmed; empty for none. */
  q: string;
  /** The shown column sorted by, and the direction. */
  sort: { column: Shown; direction: 'ASC' | 'DESC' } | null;
}

/** A grid's view: how many rows it has, and a way to read a page of them. */
interface GridView {
  total: number | null;
  read(page: number, size: number): Promise<Table>;
}

/** Everything a grid's view is made of. */
interface GridPlan {
  entity: string;
  definition: Entity | null;
  /** The operation as configured, its filters filled in and the address's sort first in its order. */
  operation: Operation;
  /** Candidate shown columns (those the read leaves out are dropped once it is read). */
  shown: Shown[];
  /** Entity columns of text the search looks in. */
  searchColumns: string[];
  state: GridState;
}

/** Resolves one grid of a screen. @internal */
export async function resolveGrid(
  host: GridHost,
  screen: Screen,
  component: Datagrid,
  query: ScreenQuery,
): Promise<ResolvedDatagrid> {
  const config = component.datagrid;
  const pageSize = Math.min(config.page_size ?? DEFAULT_GRID_ROWS, host.options.limits.maxPageSize);
  const name = component.name;
  const pageKey = `${name}_page`;
  const asked =
    Object.hasOwn(query, pageKey) && /^\d{1,7}$/.test(query[pageKey]!) ? Number(query[pageKey]) : 1;
  const page = asked >= 1 && asked <= MAX_GRID_PAGE ? asked : 1;
  const base: ResolvedDatagrid = {
    type: 'datagrid',
    name,
    entity: config.entity_name,
    columns: [],
    rows: [],
    page,
    pageSize,
    hasPrevious: false,
    hasNext: false,
    previousHref: null,
    nextHref: null,
    error: null,
    labels: [],
    cells: [],
    rowHrefs: [],
    linkColumn: 0,
    total: null,
    search: null,
    sort: null,
    sortHrefs: [],
    exportHref: config.export
      ? withParams(`/screens/${screen.url}/grids/${encodeURIComponent(name)}/export`, query, {
          [pageKey]: null,
        })
      : null,
    emptyText: config.empty_text ?? 'There is nothing to show here yet.',
  };
  const plan = await planGrid(host, component, query, page);
  if ('error' in plan) return { ...base, error: plan.error };
  const view = await openView(host, plan);
  if ('error' in view) return { ...base, ...searchOf(screen, component, query, plan), error: view.error };
  const read = await view.read(page, pageSize);
  if (read.error !== null)
    return { ...base, ...searchOf(screen, component, query, plan), total: view.total, error: read.error };
  let hasNext: boolean;
  if (view.total !== null) hasNext = page * pageSize < view.total;
  else if (read.rows.length < pageSize) hasNext = false;
  else {
    const probe = await view.read(page * pageSize + 1, 1);
    hasNext = probe.error === null && probe.rows.length > 0;
  }
  const hasPrevious = page > 1;
  const { shown, at } = shownIn(plan, read.columns, config.columns !== undefined);
  const rows = read.rows.map((row) => at.map((i) => row[i]));
  const keys = plan.definition?.primary_key ?? [];
  const keyAt = shown.findIndex((s) => s.source !== undefined && keys.includes(s.source));
  const rowAction = config.row_action?.redirect_data.url;
  const hrefFor = (n: number) =>
    withParams(`/screens/${screen.url}`, query, { [pageKey]: n <= 1 ? null : String(n) });
  const sortKey = `${name}_sort`;
  const dirKey = `${name}_dir`;
  const sorted = plan.state.sort;
  return {
    ...base,
    columns: at.map((i) => read.columns[i]!),
    rows,
    labels: shown.map((s) => s.label),
    cells: rows.map((row) => row.map((value, i) => cellText(value, shown[i]!.formatter))),
    rowHrefs: rowAction
      ? read.rows.map((row) =>
          rowHref(rowAction, query, Object.fromEntries(read.columns.map((c, i) => [c.name, row[i]]))),
        )
      : read.rows.map(() => null),
    linkColumn: keyAt >= 0 ? keyAt : 0,
    total: view.total,
    ...searchOf(screen, component, query, plan),
    sort: sorted
      ? {
          column: shown.indexOf(sorted.column),
          direction: sorted.direction === 'ASC' ? 'ascending' : 'descending',
        }
      : null,
    sortHrefs: shown.map((s) =>
      config.sortable && s.source !== undefined && sortable(plan)
        ? withParams(`/screens/${screen.url}`, query, {
            [sortKey]: s.name,
            [dirKey]: sorted?.column === s && sorted.direction === 'ASC' ? 'desc' : 'asc',
            [pageKey]: null,
          })
        : null,
    ),
    hasPrevious,
    hasNext,
    previousHref: hasPrevious ? hrefFor(page - 1) : null,
    nextHref: hasNext ? hrefFor(page + 1) : null,
  };
}

/**
 * The CSV of a grid's view: its search and sort applied, every page, the columns the viewer may
 * read under their labels, values unformatted; cells a spreadsheet would take for a formula
 * neutralised. `error` when the grid does not export, or its view cannot be read or is too long.
 * @internal
 */
export async function exportGrid(
  host: GridHost,
  component: Datagrid,
  query: ScreenQuery,
): Promise<{ csv: string; filename: string } | { error: string; status: number }> {
  if (!component.datagrid.export) return { status: 404, error: `grid "${component.name}" has no export` };
  const plan = await planGrid(host, component, query, 1);
  if ('error' in plan) return { status: 422, error: plan.error };
  const view = await openView(host, plan);
  if ('error' in view) return { status: 422, error: view.error };
  if (view.total !== null && view.total > MAX_VIEW_ROWS)
    return {
      status: 422,
      error: `This list has ${view.total.toLocaleString('en-US')} rows; at most ${MAX_VIEW_ROWS.toLocaleString('en-US')} can be exported. Search or filter it first.`,
    };
  const size = host.options.limits.maxPageSize;
  const lines: string[] = [];
  let header = false;
  let count = 0;
  for (let page = 1; ; page++) {
    const read = await view.read(page, size);
    if (read.error !== null) return { status: 422, error: read.error };
    const { shown, at } = shownIn(plan, read.columns, component.datagrid.columns !== undefined);
    if (!header) {
      lines.push(shown.map((s) => csvCell(s.label)).join(','));
      header = true;
    }
    for (const row of read.rows) lines.push(at.map((i) => csvCell(row[i])).join(','));
    count += read.rows.length;
    if (read.rows.length < size) break;
    if (count >= MAX_VIEW_ROWS)
      return {
        status: 422,
        error: `This list has more than ${MAX_VIEW_ROWS.toLocaleString('en-US')} rows; search or filter it first.`,
      };
  }
  return { csv: `\uFEFF${lines.join('\r\n')}\r\n`, filename: `${component.name}.csv` };
}

/** One CSV field: quoted when it must be; text a spreadsheet would run as a formula gets a leading `'`. @internal */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  // A number's own text (digits, sign, point, exponent) is a number to a spreadsheet, never a formula.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Checks the address against the grid and the entity, and plans its read. */
async function planGrid(
  host: GridHost,
  component: Datagrid,
  query: ScreenQuery,
  page: number,
): Promise<GridPlan | { error: string }> {
  const config = component.datagrid;
  const filled = fillOperation(config.operation ?? {}, query);
  if ('missing' in filled)
    return {
      error: `This list needs "${filled.missing}" in the address of the screen, and it is not there.`,
    };
  let definition: Entity | null = null;
  try {
    definition = await host.catalog.getDefinition(config.entity_name);
  } catch (error) {
    // A missing entity is said by the read; one the viewer may not see is refused by it.
    if (!isStepwireError(error) || error.code !== 'not_found') throw error;
  }
  const operation = filled.value;
  const types = new Map((definition?.columns ?? []).map((c) => [c.name, c.type]));
  const outputs = operation.select_columns
    ? operation.select_columns.map((s) => ({ name: s.alias ?? s.column, source: s.column }))
    : (definition?.columns ?? []).map((c) => ({ name: c.name, source: c.name }));
  const grouped = (operation.group_by?.length ?? 0) > 0 || (operation.aggregates?.length ?? 0) > 0;
  const issues: Issue[] = [];
  const shownOf = (name: string, label?: string, format?: unknown): Shown => {
    const output = outputs.find((o) => o.name === name);
    return {
      name,
      source: !grouped && output && types.has(output.source) ? output.source : undefined,
      label: label ?? name,
      formatter: makeFormatter(format, 'auto', '', issues, name),
    };
  };
  // Without `columns`, a grid shows the read's columns as they come (see resolveGrid).
  const shown = config.columns
    ? config.columns.map((c) => shownOf(c.column, c.label, c.format))
    : grouped
      ? [...(operation.group_by ?? []), ...(operation.aggregates ?? []).map((a) => a.alias)].map((n) =>
          shownOf(n),
        )
      : outputs.map((o) => shownOf(o.name));
  const plan: GridPlan = {
    entity: config.entity_name,
    definition,
    operation,
    shown,
    searchColumns: config.searchable
      ? [...new Set(shown.flatMap((s) => (s.source && types.get(s.source) === 'STRING' ? [s.source] : [])))]
      : [],
    state: { page, q: '', sort: null },
  };
  const q = query[`${component.name}_q`];
  if (plan.searchColumns.length > 0 && q !== undefined && Object.hasOwn(query, `${component.name}_q`))
    plan.state.q = q.trim().slice(0, MAX_SEARCH_LENGTH);
  const sortName = Object.hasOwn(query, `${component.name}_sort`)
    ? query[`${component.name}_sort`]
    : undefined;
  const column =
    config.sortable && sortable(plan) ? shown.find((s) => s.name === sortName && s.source) : undefined;
  if (column) {
    const dir = Object.hasOwn(query, `${component.name}_dir`) ? query[`${component.name}_dir`] : undefined;
    const direction = dir === 'desc' ? 'DESC' : 'ASC';
    plan.state.sort = { column, direction };
    // The configured order breaks ties, then the sheet's (the read's order is stable).
    plan.operation = {
      ...operation,
      order_by: [
        { column: column.source!, direction },
        ...(operation.order_by ?? []).filter((o) => o.column !== column.source),
      ],
    };
  }
  return plan;
}

/**
 * The columns of a read that the grid shows, and where each is in the read's rows: those of its
 * `columns` that the read has (a column hidden from the viewer is left out), else all of the read's.
 */
function shownIn(plan: GridPlan, columns: Column[], configured: boolean): { shown: Shown[]; at: number[] } {
  const shown = configured
    ? plan.shown.filter((s) => columns.some((c) => c.name === s.name))
    : columns.map(
        (c) =>
          plan.shown.find((s) => s.name === c.name) ?? {
            name: c.name,
            source: undefined,
            label: c.name,
            formatter: undefined,
          },
      );
  return { shown, at: shown.map((s) => columns.findIndex((c) => c.name === s.name)) };
}

/** Whether the grid's rows can be sorted by the address: not a grouped read. */
function sortable(plan: GridPlan): boolean {
  return !(plan.operation.group_by?.length || plan.operation.aggregates?.length);
}

/**
 * The view a plan describes. Without a search, or with one text column, it is one read with a
 * `CONTAINS` filter. Reads join filters by AND, so a search of several columns reads the keys of
 * the rows each column matches, then the view is the rows whose key is one of them (an entity
 * with a one-column key); otherwise the view's rows are read and searched here.
 */
async function openView(host: GridHost, plan: GridPlan): Promise<GridView | { error: string }> {
  const { q } = plan.state;
  const base = plan.operation;
  const filters = base.filters ?? [];
  const search = (column: string) =>
    ({ column, operator: 'CONTAINS', value_type: 'STRING', value: q }) as const;
  if (q === '' || plan.searchColumns.length === 1) {
    const operation: Operation =
      q === '' ? base : { ...base, filters: [...filters, search(plan.searchColumns[0]!)] };
    return { total: await count(host, plan.entity, operation), read: reader(host, plan.entity, operation) };
  }
  const key = plan.definition?.primary_key.length === 1 ? plan.definition.primary_key[0]! : undefined;
  // The definition as the viewer sees it: a key hidden from it cannot be read.
  if (key !== undefined && plan.definition!.columns.some((c) => c.name === key)) {
    const keys = new Set<unknown>();
    for (const column of plan.searchColumns) {
      const found = await readAll(host, plan.entity, {
        filters: [...filters, search(column)],
        select_columns: [{ column: key }],
      });
      if (found.error !== null) return { error: found.error };
      for (const [value] of found.rows) keys.add(value);
      if (keys.size > MAX_VIEW_ROWS) return { error: TOO_MANY_MATCHES };
    }
    const operation: Operation = {
      ...base,
      filters: [...filters, { column: key, operator: 'IN', value: [...keys] }],
    };
    return { total: keys.size, read: reader(host, plan.entity, operation) };
  }
  const all = await readAll(host, plan.entity, base);
  if (all.error !== null) return { error: all.error };
  const at = plan.shown
    .filter((s) => s.source !== undefined && plan.searchColumns.includes(s.source))
    .map((s) => all.columns.findIndex((c) => c.name === s.name))
    .filter((i) => i >= 0);
  const rows = all.rows.filter((row) => at.some((i) => typeof row[i] === 'string' && row[i].includes(q)));
  return {
    total: rows.length,
    read: (page, size) =>
      Promise.resolve({
        columns: all.columns,
        rows: rows.slice((page - 1) * size, page * size),
        error: null,
      }),
  };
}

const TOO_MANY_MATCHES = `This search matches more than ${MAX_VIEW_ROWS.toLocaleString('en-US')} rows; search for more precise words.`;

/** Reads pages of `operation`. */
function reader(host: GridHost, entity: string, operation: Operation): GridView['read'] {
  return async (page, size) => {
    const read = await host.catalog.getEntity({
      entity_name: entity,
      operation,
      page_size: size,
      page_number: page,
    });
    if (read.body.error?.is_error) return { error: readError(read.body.error.errors ?? []) };
    return { columns: read.body.table.columns ?? [], rows: read.body.table.rows ?? [], error: null };
  };
}

/** Every row of `operation`, page by page, up to {@link MAX_VIEW_ROWS}. */
async function readAll(host: GridHost, entity: string, operation: Operation): Promise<Table> {
  const size = host.options.limits.maxPageSize;
  const read = reader(host, entity, operation);
  const rows: unknown[][] = [];
  for (let page = 1; ; page++) {
    const part = await read(page, size);
    if (part.error !== null) return part;
    rows.push(...part.rows);
    if (part.rows.length < size) return { columns: part.columns, rows, error: null };
    if (rows.length > MAX_VIEW_ROWS) return { error: TOO_MANY_MATCHES };
  }
}

/** How many rows `operation` selects: a count read; null when it cannot count (a grouped read). */
async function count(host: GridHost, entity: string, operation: Operation): Promise<number | null> {
  if (operation.group_by?.length || operation.aggregates?.length) return null;
  const read = await host.catalog.getEntity({
    entity_name: entity,
    operation: {
      ...(operation.filters ? { filters: operation.filters } : {}),
      aggregates: [{ function: 'count', alias: 'rows' }],
    },
  });
  const value = read.body.error?.is_error ? undefined : read.body.table.rows?.[0]?.[0];
  return typeof value === 'number' ? value : null;
}

/** A person using the screen sees a plain sentence; the read's own words name columns and sheets. */
function readError(errors: string[]): string {
  return errors.some((message) => message.startsWith('operation.'))
    ? 'This list cannot be shown for the values in the address of the screen.'
    : 'This list could not be read.';
}

/** The search box of a searchable grid, with what it keeps of the address. */
function searchOf(
  screen: Screen,
  component: Datagrid,
  query: ScreenQuery,
  plan: GridPlan,
): { search: GridSearch | null } {
  if (plan.searchColumns.length === 0) return { search: null };
  const param = `${component.name}_q`;
  const page = `${component.name}_page`;
  return {
    search: {
      param,
      value: plan.state.q,
      keep: Object.entries(query).filter(([name]) => name !== param && name !== page),
      columns: plan.shown
        .filter((s) => s.source && plan.searchColumns.includes(s.source))
        .map((s) => s.label),
      clearHref: withParams(`/screens/${screen.url}`, query, { [param]: null, [page]: null }),
    },
  };
}

/** A row's link: its `row_action` with the row's values; null when a value it needs is missing. */
function rowHref(template: string, query: ScreenQuery, row: Record<string, unknown>): string | null {
  // The application's check, when it was stored, made sure the target is one of its screens.
  const target = parseRedirectUrl(template)?.screen;
  try {
    return resolveRedirect(template, new Set(target === undefined ? [] : [target]), { query, row });
  } catch (error) {
    if (isStepwireError(error)) return null;
    throw error;
  }
}

/** A cell as text: with the column's format when it fits the value, else as it is. */
function cellText(value: unknown, formatter: ValueFormatter | undefined): string {
  if (value === null || value === undefined) return '';
  const formatted = formatter?.format(value);
  if (formatted !== undefined) return formatted;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * The operation with `{{query_params.x}}` in its filter values filled in; `missing` names the
 * first query parameter the address lacks. @internal
 */
export function fillOperation(
  operation: Operation,
  query: ScreenQuery,
): { value: Operation } | { missing: string } {
  const filters: NonNullable<Operation['filters']> = [];
  for (const filter of operation.filters ?? []) {
    const fill = (value: unknown): { value: unknown } | { missing: string } =>
      typeof value === 'string' ? fillQueryValue(value, query) : { value };
    if (Array.isArray(filter.value)) {
      const values: unknown[] = [];
      for (const item of filter.value) {
        const filled = fill(item);
        if ('missing' in filled) return filled;
        values.push(filled.value);
      }
      filters.push({ ...filter, value: values });
    } else if (filter.value !== undefined) {
      const filled = fill(filter.value);
      if ('missing' in filled) return filled;
      filters.push({ ...filter, value: filled.value });
    } else filters.push(filter);
  }
  return { value: operation.filters ? { ...operation, filters } : operation };
}

/** `path` with the screen's query, `changes` applied (null removes a parameter); order kept. */
function withParams(path: string, query: ScreenQuery, changes: Record<string, string | null>): string {
  const params = new URLSearchParams(Object.entries(query));
  for (const [name, value] of Object.entries(changes)) {
    if (value === null) params.delete(name);
    else params.set(name, value);
  }
  const search = params.toString();
  return `${path}${search ? `?${search}` : ''}`;
}
