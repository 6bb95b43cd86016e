/**
 * A `datagrid` resolved for display: one page of its entity, read with its `operation` (filter
 * values taking `{{query_params.x}}` from the screen's address), and the links to the pages around it.
 * @module
 */
import type { Component, Operation, Screen } from '../schema/index.js';
import { DEFAULT_GRID_ROWS } from '../schema/grid-rows.js';
import type { AppHost } from './host.js';
import { fillQueryValue } from './redirect.js';
import type { ResolvedDatagrid, ScreenQuery } from './types.js';

/** Highest grid page number read from a query string; a higher one, like any other bad value, is page 1. */
const MAX_GRID_PAGE = 1_000_000;

/** Resolves one grid of a screen. @internal */
export async function resolveGrid(
  host: AppHost,
  screen: Screen,
  component: Extract<Component, { type: 'datagrid' }>,
  query: ScreenQuery,
): Promise<ResolvedDatagrid> {
  const limits = host.options.limits;
  const pageSize = Math.min(component.datagrid.page_size ?? DEFAULT_GRID_ROWS, limits.maxPageSize);
  const pageKey = `${component.name}_page`;
  const asked =
    Object.hasOwn(query, pageKey) && /^\d{1,7}$/.test(query[pageKey]!) ? Number(query[pageKey]) : 1;
  const page = asked >= 1 && asked <= MAX_GRID_PAGE ? asked : 1;
  const entity = component.datagrid.entity_name;
  const base: ResolvedDatagrid = {
    type: 'datagrid',
    name: component.name,
    entity,
    columns: [],
    rows: [],
    page,
    pageSize,
    hasPrevious: false,
    hasNext: false,
    previousHref: null,
    nextHref: null,
    error: null,
  };
  const operation = fillOperation(component.datagrid.operation ?? {}, query);
  if ('missing' in operation)
    return {
      ...base,
      error: `This list needs "${operation.missing}" in the address of the screen, and it is not there.`,
    };
  const read = await host.catalog.getEntity({
    entity_name: entity,
    operation: operation.value,
    page_size: pageSize,
    page_number: page,
  });
  // A person using the screen sees a plain sentence; the read's own words name columns and sheets.
  const error = read.body.error?.is_error
    ? (read.body.error.errors ?? []).some((message) => message.startsWith('operation.'))
      ? 'This list cannot be shown for the values in the address of the screen.'
      : 'This list could not be read.'
    : null;
  const rows = read.body.table.rows ?? [];
  let hasNext = false;
  if (!error && rows.length === pageSize) {
    const probe = await host.catalog.getEntity({
      entity_name: entity,
      operation: operation.value,
      page_size: 1,
      page_number: page * pageSize + 1,
    });
    hasNext = (probe.body.table.rows?.length ?? 0) > 0;
  }
  const hasPrevious = page > 1;
  const hrefFor = (n: number) => pageHref(screen.url, query, pageKey, n);
  return {
    ...base,
    columns: read.body.table.columns ?? [],
    rows,
    hasPrevious,
    hasNext,
    previousHref: hasPrevious ? hrefFor(page - 1) : null,
    nextHref: hasNext ? hrefFor(page + 1) : null,
    error,
  };
}

/** The operation with `{{query_params.x}}` in its filter values filled in. */
function fillOperation(operation: Operation, query: ScreenQuery): { value: Operation } | { missing: string } {
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

function pageHref(url: string, query: ScreenQuery, key: string, page: number): string {
  const params = new URLSearchParams(Object.entries(query));
  if (page <= 1) params.delete(key);
  else params.set(key, String(page));
  const search = params.toString();
  return `/screens/${url}${search ? `?${search}` : ''}`;
}
