/**
 * `chart` and `metric` components resolved for display: an aggregate read of their entity (filter
 * values taking `{{query_params.x}}` from the screen's address), as points or as one number.
 * @module
 */
import type { Component } from '../schema/index.js';
import type { Issue } from '../errors/index.js';
import { makeFormatter, type ValueFormatter } from '../pdf/value-format.js';
import { fillOperation, type GridHost } from './grid.js';
import type { ChartPoint, ResolvedChart, ResolvedMetric, ScreenQuery } from './types.js';

/** Most points a chart draws: the first ones of its read, in its order. @internal */
export const MAX_CHART_POINTS = 100;

type Chart = Extract<Component, { type: 'chart' }>;
type Metric = Extract<Component, { type: 'metric' }>;

/** Resolves a chart: its read's groups (`x`) and values (`y`), at most {@link MAX_CHART_POINTS}. @internal */
export async function resolveChart(
  host: Pick<GridHost, 'catalog'>,
  component: Chart,
  query: ScreenQuery,
): Promise<ResolvedChart> {
  const config = component.chart;
  const base: ResolvedChart = {
    type: 'chart',
    name: component.name,
    kind: config.kind,
    title: config.title ?? config.entity_name,
    entity: config.entity_name,
    xLabel: config.x,
    yLabel: config.y,
    points: [],
    truncated: false,
    error: null,
  };
  const read = await aggregateRead(host, config.entity_name, config.operation, query, MAX_CHART_POINTS + 1);
  if ('error' in read) return { ...base, error: read.error };
  const x = read.columns.indexOf(config.x);
  const y = read.columns.indexOf(config.y);
  if (x < 0 || y < 0) return { ...base, error: 'This chart could not be read.' };
  const formatter = formatterOf(config.format, component.name);
  const points: ChartPoint[] = read.rows.slice(0, MAX_CHART_POINTS).map((row) => {
    const value = toNumber(row[y]);
    return { label: labelOf(row[x]), value, text: valueText(row[y], formatter) };
  });
  return { ...base, points, truncated: read.rows.length > MAX_CHART_POINTS };
}

/** Resolves a metric: the `value` column of the first row of its read, formatted. @internal */
export async function resolveMetric(
  host: Pick<GridHost, 'catalog'>,
  component: Metric,
  query: ScreenQuery,
): Promise<ResolvedMetric> {
  const config = component.metric;
  const base: ResolvedMetric = {
    type: 'metric',
    name: component.name,
    label: config.label,
    value: null,
    text: '',
    error: null,
  };
  const read = await aggregateRead(host, config.entity_name, config.operation, query, 1);
  if ('error' in read) return { ...base, error: read.error };
  const at = read.columns.indexOf(config.value);
  if (at < 0) return { ...base, error: 'This number could not be read.' };
  const value = read.rows[0]?.[at] ?? null;
  return { ...base, value, text: valueText(value, formatterOf(config.format, component.name)) };
}

/** One page of an aggregate read, the operation's `{{query_params.x}}` filled in. */
async function aggregateRead(
  host: Pick<GridHost, 'catalog'>,
  entity: string,
  operation: Chart['chart']['operation'],
  query: ScreenQuery,
  size: number,
): Promise<{ columns: string[]; rows: unknown[][] } | { error: string }> {
  const filled = fillOperation(operation, query);
  if ('missing' in filled)
    return { error: `This needs "${filled.missing}" in the address of the screen, and it is not there.` };
  const read = await host.catalog.getEntity({
    entity_name: entity,
    operation: filled.value,
    page_size: size,
    page_number: 1,
  });
  if (read.body.error?.is_error)
    return {
      error: (read.body.error.errors ?? []).some((m) => m.startsWith('operation.filters'))
        ? 'This cannot be shown for the values in the address of the screen.'
        : 'This could not be read.',
    };
  return {
    columns: (read.body.table.columns ?? []).map((c) => c.name),
    rows: read.body.table.rows ?? [],
  };
}

function formatterOf(format: unknown, owner: string): ValueFormatter | undefined {
  const issues: Issue[] = [];
  return makeFormatter(format, 'auto', '', issues, owner);
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return null;
}

function labelOf(value: unknown): string {
  if (value === null || value === undefined) return '(none)';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function valueText(value: unknown, formatter: ValueFormatter | undefined): string {
  if (value === null || value === undefined) return '';
  const formatted = formatter?.format(value);
  if (formatted !== undefined) return formatted;
  if (typeof value === 'number')
    return new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(value);
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
