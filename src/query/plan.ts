/**
 * Checks a validated `get_entity` input against the entity (columns, operators, values, paging) and
 * turns it into a plan with column positions and values already coerced to the column types.
 * @module
 */
import type { ColumnType, EntityColumn } from '../schema/entity.js';
import type { AggregateFunction, FilterOperator, GetEntityInput } from '../schema/get-entity.js';
import { coerceValue } from './coerce.js';
import { listNames, quoteName } from '../schema/issues.js';

/** A filter value coerced to its column's domain; `null` is SQL NULL (compares with nothing). @internal */
export type Scalar = string | number | boolean;

/** One filter of a plan. @internal */
export interface FilterPlan {
  column: number;
  operator: FilterOperator;
  /** The value for comparison and text operators; `null` makes the filter match no row. */
  value: Scalar | null;
  /** The non-null values of an `IN` / `NOT_IN` list. */
  list: Scalar[];
  /** Whether the `IN` / `NOT_IN` list held a null (then `NOT_IN` matches no row, as in SQL). */
  listHasNull: boolean;
}

/**
 * The most cells one page may hold (columns selected x rows per page): 10,000 rows of 100 columns.
 * A page of 1,000 aliased columns and 10,000 rows is 10 million cells, too large to answer as JSON.
 */
const MAX_PAGE_CELLS = 1_000_000;

/** The most problems a refused read lists; one last says how many more (an IN list of 200,000 bad items). */
const MAX_LISTED_ERRORS = 100;

/** One aggregate of a plan: `column` is -1 for `count` of rows. @internal */
export interface AggregatePlan {
  fn: AggregateFunction;
  column: number;
  name: string;
}

/**
 * The grouping of an aggregate read. Its output columns are the `by` columns, then the aggregates;
 * `order` names them by that position. @internal
 */
export interface GroupPlan {
  by: { column: number; name: string }[];
  aggregates: AggregatePlan[];
  order: { output: number; descending: boolean }[];
}

/**
 * A checked read: what to select, filter, order and which page. With `group`, the read groups and
 * aggregates: `select` and `order` are then empty (the group plan has its own order). @internal
 */
export interface ReadPlan {
  select: { column: number; name: string }[];
  filters: FilterPlan[];
  order: { column: number; descending: boolean }[];
  group?: GroupPlan;
  pageSize: number;
  pageNumber: number;
}

/** Limits of a read. */
export interface ReadLimits {
  /** Largest `page_size` accepted. @default 10000 */
  maxPageSize: number;
  /** `page_size` when the input has none. @default 100 */
  defaultPageSize: number;
}

const TEXT_OPERATORS: ReadonlySet<FilterOperator> = new Set(['CONTAINS', 'STARTS_WITH', 'ENDS_WITH']);
const TEXT_TYPES: ReadonlySet<ColumnType> = new Set(['STRING', 'DATE', 'DATETIME']);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  return String(value);
}

/** Builds the plan, or returns every problem as `path: message` lines. @internal */
export function planRead(
  entityName: string,
  columns: readonly EntityColumn[],
  input: GetEntityInput,
  limits: ReadLimits,
): { ok: true; plan: ReadPlan } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const positions = new Map<string, number>(columns.map((column, c) => [column.name, c]));
  // The list of column names is made for the first error that names it, not for every read.
  let known: string | undefined;
  const find = (name: string, path: string): number => {
    const c = positions.get(name);
    if (c === undefined)
      errors.push(
        `${path}: unknown column ${quoteName(name)} of entity ${quoteName(entityName)} (columns: ${(known ??= listNames(columns.map((column) => column.name)))})`,
      );
    return c ?? -1;
  };
  if (input.entity_name !== entityName)
    errors.push(`entity_name: ${quoteName(input.entity_name)} does not name entity ${quoteName(entityName)}`);

  const operation = input.operation;
  const grouped = (operation.group_by?.length ?? 0) > 0 || (operation.aggregates?.length ?? 0) > 0;
  const select: ReadPlan['select'] = [];
  const chosen = grouped ? [] : (operation.select_columns ?? []);
  if (grouped && (operation.select_columns?.length ?? 0) > 0)
    errors.push(
      'operation.select_columns: cannot be combined with group_by or aggregates (the table then has the group_by columns, then the aggregate aliases); leave select_columns out',
    );
  const names = new Map<string, number>();
  chosen.forEach((item, i) => {
    const path = `operation.select_columns[${i}]`;
    const c = find(item.column, `${path}.column`);
    if (item.alias !== undefined && item.alias.trim() === '')
      errors.push(`${path}.alias: alias must not be empty`);
    const name = item.alias ?? item.column;
    const earlier = names.get(name);
    if (earlier !== undefined)
      errors.push(
        `${path}: output column name ${quoteName(name)} is already used by select_columns[${earlier}]; give one of them a different alias`,
      );
    else names.set(name, i);
    select.push({ column: c, name });
  });
  if (chosen.length === 0 && !grouped)
    columns.forEach((column, c) => select.push({ column: c, name: column.name }));

  const filters: FilterPlan[] = [];
  (input.operation.filters ?? []).forEach((filter, i) => {
    const path = `operation.filters[${i}]`;
    const c = find(filter.column, `${path}.column`);
    if (c < 0) return;
    const column = columns[c]!;
    const plan: FilterPlan = {
      column: c,
      operator: filter.operator,
      value: null,
      list: [],
      listHasNull: false,
    };
    const op = filter.operator;
    if (op === 'IS_NULL' || op === 'IS_NOT_NULL') {
      if (filter.value !== undefined && filter.value !== null)
        errors.push(`${path}.value: operator ${op} takes no value, got ${describe(filter.value)}`);
    } else if (filter.value === undefined) {
      errors.push(`${path}.value: operator ${op} needs a value`);
    } else if (op === 'IN' || op === 'NOT_IN') {
      if (!Array.isArray(filter.value))
        errors.push(`${path}.value: operator ${op} needs an array of values, got ${describe(filter.value)}`);
      else
        filter.value.forEach((item: unknown, k) => {
          const value = coerceFilterValue(item, filter.value_type, column, `${path}.value[${k}]`, errors);
          if (value === null) plan.listHasNull = true;
          else if (value !== undefined) plan.list.push(value);
        });
    } else if (TEXT_OPERATORS.has(op)) {
      if (!TEXT_TYPES.has(column.type))
        errors.push(
          `${path}.operator: ${op} works on text columns only; column ${JSON.stringify(column.name)} is ${column.type}`,
        );
      else {
        const value = coerceFilterValue(
          filter.value,
          filter.value_type,
          { name: column.name, type: 'STRING' },
          `${path}.value`,
          errors,
        );
        if (value !== undefined) plan.value = value;
      }
    } else {
      const value = coerceFilterValue(filter.value, filter.value_type, column, `${path}.value`, errors);
      if (value !== undefined) plan.value = value;
    }
    filters.push(plan);
  });

  const order: ReadPlan['order'] = [];
  const group = grouped ? planGroup(columns, operation, find, errors) : undefined;
  const ordered = new Set<number>();
  if (!group)
    (operation.order_by ?? []).forEach((key, i) => {
      const column = find(key.column, `operation.order_by[${i}].column`);
      // A column already ordered by decides nothing more: left out (ties would walk it again).
      if (ordered.has(column)) return;
      ordered.add(column);
      order.push({ column, descending: key.direction === 'DESC' });
    });

  // page_size is capped by limits.maxPageSize: a larger one reads pages of the cap's size, not an error.
  const pageSize = Math.min(input.page_size ?? limits.defaultPageSize, limits.maxPageSize);
  const width = group ? group.by.length + group.aggregates.length : select.length;
  if (width * pageSize > MAX_PAGE_CELLS)
    errors.push(
      `operation.${group ? 'aggregates' : 'select_columns'}: ${width} columns in pages of ${pageSize} rows would answer more than ${MAX_PAGE_CELLS} cells at once; select fewer columns or ask for smaller pages`,
    );
  if (errors.length > MAX_LISTED_ERRORS)
    errors.splice(MAX_LISTED_ERRORS, errors.length, `and ${errors.length - MAX_LISTED_ERRORS} more problems`);
  if (errors.length > 0) return { ok: false, errors };
  const plan: ReadPlan = { select, filters, order, pageSize, pageNumber: input.page_number ?? 1 };
  if (group) plan.group = group;
  return { ok: true, plan };
}

/**
 * The group plan of a read with `group_by` or `aggregates`: group columns (each once), aggregates
 * (an alias each, unique and unlike every group column; `sum` and `avg` over `NUMBER` columns, every
 * function but `count` with a column), and the order over those output columns.
 */
function planGroup(
  columns: readonly EntityColumn[],
  operation: GetEntityInput['operation'],
  find: (name: string, path: string) => number,
  errors: string[],
): GroupPlan {
  const by: GroupPlan['by'] = [];
  const outputs = new Map<string, number>();
  const where = new Map<string, string>();
  (operation.group_by ?? []).forEach((name, i) => {
    const path = `operation.group_by[${i}]`;
    const c = find(name, path);
    const earlier = where.get(name);
    if (earlier !== undefined) {
      errors.push(`${path}: column ${quoteName(name)} is already grouped by at ${earlier}`);
      return;
    }
    where.set(name, path);
    if (c >= 0) outputs.set(name, by.length);
    by.push({ column: c, name });
  });
  const aggregates: AggregatePlan[] = [];
  (operation.aggregates ?? []).forEach((item, i) => {
    const path = `operation.aggregates[${i}]`;
    let column = -1;
    if (item.column !== undefined) column = find(item.column, `${path}.column`);
    else if (item.function !== 'count')
      errors.push(
        `${path}.column: ${item.function} needs a column (only count may leave it out, to count rows)`,
      );
    const type = column >= 0 ? columns[column]!.type : undefined;
    if ((item.function === 'sum' || item.function === 'avg') && type !== undefined && type !== 'NUMBER')
      errors.push(
        `${path}.column: ${item.function} works on NUMBER columns only; column ${quoteName(item.column!)} is ${type}`,
      );
    const name = item.alias;
    const earlier = where.get(name);
    if (name.trim() === '') errors.push(`${path}.alias: alias must not be empty`);
    else if (earlier !== undefined)
      errors.push(
        earlier.startsWith('operation.group_by')
          ? `${path}.alias: alias ${quoteName(name)} is the name of group column ${earlier}; give the aggregate another alias`
          : `${path}.alias: alias ${quoteName(name)} is already used by ${earlier}; give one of them a different alias`,
      );
    else {
      where.set(name, path);
      outputs.set(name, by.length + aggregates.length);
    }
    aggregates.push({ fn: item.function, column, name });
  });

  const order: GroupPlan['order'] = [];
  const ordered = new Set<number>();
  const names = listNames([...outputs.keys()]);
  (operation.order_by ?? []).forEach((key, i) => {
    const output = outputs.get(key.column);
    if (output === undefined) {
      errors.push(
        `operation.order_by[${i}].column: ${quoteName(key.column)} is neither a group_by column nor an aggregate alias (output columns: ${names})`,
      );
      return;
    }
    if (ordered.has(output)) return;
    ordered.add(output);
    order.push({ output, descending: key.direction === 'DESC' });
  });
  return { by, aggregates, order };
}

/** The value coerced by `value_type` (when given) and then to the column type; `undefined` after an error. */
function coerceFilterValue(
  value: unknown,
  valueType: ColumnType | undefined,
  column: EntityColumn,
  path: string,
  errors: string[],
): Scalar | null | undefined {
  if (value === null) return null;
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    errors.push(`${path}: must be a string, number, boolean or null, got ${describe(value)}`);
    return undefined;
  }
  let current: unknown = value;
  if (valueType !== undefined) {
    const typed = coerceValue(valueType, current);
    if (!typed.ok) {
      errors.push(`${path}: ${describe(value)} is not a ${valueType} (value_type)`);
      return undefined;
    }
    current = typed.value;
  }
  const result = coerceValue(column.type, current);
  if (!result.ok) {
    errors.push(
      `${path}: ${describe(value)}${valueType ? ` (as ${valueType})` : ''} cannot be compared with column ${JSON.stringify(column.name)} of type ${column.type}`,
    );
    return undefined;
  }
  return result.value;
}
