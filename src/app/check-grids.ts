/**
 * Checks of grids, charts and metrics against the catalog, when an application is stored: each
 * names an existing entity, and every column it names (in its operation, its `columns`, its
 * `row_action`, its `x` and `y`) is one its read has; each `format` is one `Intl` takes.
 * @module
 */
import type { Issue } from '../errors/index.js';
import type { Component, Entity, Operation } from '../schema/index.js';
import { makeFormatter } from '../pdf/value-format.js';

type Datagrid = Extract<Component, { type: 'datagrid' }>;
type Aggregated = Extract<Component, { type: 'chart' | 'metric' }>;

/**
 * Problems of a grid: its entity exists; its operation, its `columns` and the `{{row.x}}` of its
 * `row_action` name columns it reads; its formats are valid. @internal
 */
export function gridIssues(component: Datagrid, entities: ReadonlyMap<string, Entity>, at: string): Issue[] {
  const config = component.datagrid;
  const owner = `grid "${component.name}"`;
  const entity = entities.get(config.entity_name);
  if (!entity)
    return [
      {
        code: 'unknown_entity',
        path: `${at}.datagrid.entity_name`,
        message: `${owner} names entity "${config.entity_name}", which does not exist`,
      },
    ];
  const operation = config.operation ?? {};
  const issues = operationIssues(operation, entity, `${at}.datagrid.operation`, owner);
  const outputs = outputColumns(operation, entity);
  const listed = outputs.join(', ');
  config.columns?.forEach((column, i) => {
    const path = `${at}.datagrid.columns[${i}]`;
    if (!outputs.includes(column.column))
      issues.push({
        code: 'unknown_column',
        path: `${path}.column`,
        message: `${owner} shows column "${column.column}", which its read does not have (columns: ${listed})`,
      });
    makeFormatter(column.format, 'auto', `${path}.format`, issues, `${owner} column "${column.column}"`);
  });
  const url = config.row_action?.redirect_data.url ?? '';
  for (const match of url.matchAll(/\{\{\s*row\.([^}\s]+)\s*\}\}/g))
    if (!outputs.includes(match[1]!))
      issues.push({
        code: 'unknown_column',
        path: `${at}.datagrid.row_action.redirect_data.url`,
        message: `${owner} links each row with {{row.${match[1]!}}}, but its read has no column "${match[1]!}" (columns: ${listed})`,
      });
  return issues;
}

/**
 * Problems of a chart or a metric: its entity exists; its operation names columns of it (order
 * keys may also be aggregate aliases); its format is valid. That `x` is a group column and `y` (a
 * metric's `value`) an alias is checked with the config's shape. @internal
 */
export function chartIssues(
  component: Aggregated,
  entities: ReadonlyMap<string, Entity>,
  at: string,
): Issue[] {
  const config = component.type === 'chart' ? component.chart : component.metric;
  const owner = `${component.type} "${component.name}"`;
  const base = `${at}.${component.type}`;
  const entity = entities.get(config.entity_name);
  if (!entity)
    return [
      {
        code: 'unknown_entity',
        path: `${base}.entity_name`,
        message: `${owner} names entity "${config.entity_name}", which does not exist`,
      },
    ];
  const issues = operationIssues(config.operation, entity, `${base}.operation`, owner);
  makeFormatter(config.format, 'auto', `${base}.format`, issues, owner);
  return issues;
}

/** The columns of a read of `entity` with `operation`: selected, grouped and aggregated, or all. */
function outputColumns(operation: Operation, entity: Entity): string[] {
  if (operation.group_by?.length || operation.aggregates?.length)
    return [...(operation.group_by ?? []), ...(operation.aggregates ?? []).map((a) => a.alias)];
  if (operation.select_columns) return operation.select_columns.map((s) => s.alias ?? s.column);
  return entity.columns.map((c) => c.name);
}

/** Columns an operation names that `entity` does not have. */
function operationIssues(operation: Operation, entity: Entity, at: string, owner: string): Issue[] {
  const aliases = (operation.aggregates ?? []).map((a) => a.alias);
  const named = [
    ...(operation.select_columns ?? []).map((s, i) => ({
      column: s.column,
      path: `select_columns[${i}].column`,
    })),
    ...(operation.filters ?? []).map((f, i) => ({ column: f.column, path: `filters[${i}].column` })),
    ...(operation.group_by ?? []).map((column, i) => ({ column, path: `group_by[${i}]` })),
    ...(operation.aggregates ?? []).flatMap((a, i) =>
      a.column === undefined ? [] : [{ column: a.column, path: `aggregates[${i}].column` }],
    ),
    ...(operation.order_by ?? [])
      .map((o, i) => ({ column: o.column, path: `order_by[${i}].column` }))
      .filter(({ column }) => !aliases.includes(column)),
  ];
  return named
    .filter(({ column }) => !entity.columns.some((c) => c.name === column))
    .map(({ column, path }) => ({
      code: 'unknown_column',
      path: `${at}.${path}`,
      message: `${owner} names column "${column}", which entity "${entity.name}" does not have (columns: ${entity.columns.map((c) => c.name).join(', ')})`,
    }));
}
