/**
 * The SQLite side of the entity-read oracle test (`oracle.test.ts`): a case's table and read, by
 * hand in SQL, run with sql.js.
 */
import type { Database, SqlValue } from 'sql.js';
import type { Filter, GetEntityInput } from '../../src/schema/get-entity.js';

/** Column kinds of the oracle's tables. */
export type Kind = 'NUMBER' | 'STRING' | 'BOOLEAN';
/** A typed cell value, as SQLite gets it. */
export type Typed = number | string | boolean | null;

/** A table (typed rows) and a read of it. */
export interface OracleCase {
  kinds: Kind[];
  rows: Typed[][];
  input: GetEntityInput;
  /** For each filter of `input`, the SQL value of each item when the test gave it; else it is worked out here. */
  sqlValues: ((Typed | undefined)[] | undefined)[];
}

function bind(value: unknown): SqlValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  return value as SqlValue;
}

/** The filter in SQL, with its parameters (the value already typed as the column's type). */
function filterSql(
  filter: Filter,
  kind: Kind,
  params: SqlValue[],
  sqlValues: (Typed | undefined)[] = [],
): string {
  const col = `"${filter.column}"`;
  const typed = (v: unknown, k = 0): unknown =>
    sqlValues[k] !== undefined
      ? sqlValues[k]
      : filter.value_type === 'NUMBER' && typeof v === 'string'
        ? Number(v)
        : v;
  const one = (): string => {
    params.push(bind(typed(filter.value)));
    return '?';
  };
  switch (filter.operator) {
    case 'EQUALS':
      return `${col} = ${one()}`;
    case 'NOT_EQUALS':
      return `${col} <> ${one()}`;
    case 'GREATER_THAN':
      return `${col} > ${one()}`;
    case 'GREATER_THAN_OR_EQUALS':
      return `${col} >= ${one()}`;
    case 'LESS_THAN':
      return `${col} < ${one()}`;
    case 'LESS_THAN_OR_EQUALS':
      return `${col} <= ${one()}`;
    case 'CONTAINS':
      return `instr(${col}, ${one()}) > 0`;
    case 'STARTS_WITH':
      return `substr(${col}, 1, length(${one()})) = ${one()}`;
    case 'ENDS_WITH':
      return `(length(${col}) >= length(${one()}) AND substr(${col}, length(${col}) - length(${one()}) + 1) = ${one()})`;
    case 'IS_NULL':
      return `${col} IS NULL`;
    case 'IS_NOT_NULL':
      return `${col} IS NOT NULL`;
    case 'IN':
    case 'NOT_IN': {
      const items = filter.value as unknown[];
      items.forEach((item, k) => params.push(bind(typed(item, k))));
      const list = `(${items.map(() => '?').join(', ')})`;
      if (filter.operator === 'IN') return `${col} IN ${list}`;
      // SQLite makes `x NOT IN ()` true even for NULL x; our rule (no comparison matches an empty cell) keeps NULL out.
      return `(${col} IS NOT NULL AND ${col} NOT IN ${list})`;
    }
  }
  void kind;
  throw new Error('unreachable');
}

export function oracle(db: Database, c: OracleCase): unknown[][] {
  const names = c.kinds.map((_, i) => `c${i}`);
  const sqlType = { NUMBER: 'REAL', STRING: 'TEXT', BOOLEAN: 'INTEGER' } as const;
  db.run(`CREATE TABLE t (${c.kinds.map((k, i) => `"${names[i]}" ${sqlType[k]}`).join(', ')})`);
  const insert = db.prepare(`INSERT INTO t VALUES (${names.map(() => '?').join(', ')})`);
  for (const row of c.rows) insert.run(row.map(bind));
  insert.free();
  const op = c.input.operation;
  if ((op.group_by?.length ?? 0) > 0 || (op.aggregates?.length ?? 0) > 0) return grouped(db, c, names);
  const selected =
    op.select_columns && op.select_columns.length > 0 ? op.select_columns.map((s) => s.column) : names;
  const params: SqlValue[] = [];
  const where = (op.filters ?? []).map((f, i) =>
    filterSql(f, c.kinds[names.indexOf(f.column)]!, params, c.sqlValues[i]),
  );
  const order = (op.order_by ?? []).map((o) => `"${o.column}" ${o.direction} NULLS LAST`);
  const size = c.input.page_size ?? 100;
  const sql =
    `SELECT ${selected.map((s) => `"${s}"`).join(', ')} FROM t` +
    (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY ${[...order, 'rowid'].join(', ')} LIMIT ${size} OFFSET ${((c.input.page_number ?? 1) - 1) * size}`;
  const result = db.exec(sql, params);
  const rows = result[0]?.values ?? [];
  return rows.map((row) =>
    row.map((v, i) => (c.kinds[names.indexOf(selected[i]!)] === 'BOOLEAN' && v !== null ? v === 1 : v)),
  );
}

/**
 * An aggregate read in SQL: `GROUP BY` the group columns, aggregates as SQLite computes them, the
 * groups ordered by the keys (nulls last), then by their first row (`MIN(rowid)`), then paged.
 */
function grouped(db: Database, c: OracleCase, names: string[]): unknown[][] {
  const op = c.input.operation;
  const kindOf = (column: string): Kind => c.kinds[names.indexOf(column)]!;
  const by = op.group_by ?? [];
  const aggregates = op.aggregates ?? [];
  const outputs = [
    ...by.map((column) => ({ sql: `"${column}"`, kind: kindOf(column) as Kind | undefined })),
    ...aggregates.map((a) => ({
      sql: `${a.function}(${a.column === undefined ? '*' : `"${a.column}"`}) AS "${a.alias}"`,
      // min and max keep their column's kind (booleans come back as 0 / 1); the others are numbers.
      kind: a.function === 'min' || a.function === 'max' ? kindOf(a.column!) : undefined,
    })),
  ];
  const params: SqlValue[] = [];
  const where = (op.filters ?? []).map((f, i) => filterSql(f, kindOf(f.column), params, c.sqlValues[i]));
  const order = (op.order_by ?? []).map((o) => `"${o.column}" ${o.direction} NULLS LAST`);
  const size = c.input.page_size ?? 100;
  const sql =
    `SELECT ${outputs.map((o) => o.sql).join(', ')} FROM t` +
    (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
    (by.length > 0 ? ` GROUP BY ${by.map((column) => `"${column}"`).join(', ')}` : '') +
    ` ORDER BY ${[...order, 'MIN(rowid)'].join(', ')} LIMIT ${size} OFFSET ${((c.input.page_number ?? 1) - 1) * size}`;
  const rows = db.exec(sql, params)[0]?.values ?? [];
  return rows.map((row) => row.map((v, i) => (outputs[i]!.kind === 'BOOLEAN' && v !== null ? v === 1 : v)));
}

/** -0 and 0 are the same number to SQLite. */
export const normalize = (rows: unknown[][]): unknown[][] =>
  rows.map((row) => row.map((v) => (v === 0 ? 0 : v)));
