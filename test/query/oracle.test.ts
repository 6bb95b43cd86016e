/**
 * Property tests: random tables and random reads give exactly what SQLite (sql.js) gives for the same
 * data and the same query, translated to SQL by hand (`sqlite-oracle.ts`). Every read runs twice,
 * with the hash indexes and with scans only.
 */
import fc from 'fast-check';
import initSqlJs, { type SqlJsStatic } from 'sql.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CellValue } from '../../src/adapters/types.js';
import { mapSheet } from '../../src/catalog/sheet-mapping.js';
import { hasColumnIndex } from '../../src/query/hash-index.js';
import { executeRead } from '../../src/query/index.js';
import type { Entity } from '../../src/schema/entity.js';
import {
  AGGREGATE_FUNCTIONS,
  FILTER_OPERATORS,
  type Aggregate,
  type Filter,
  type GetEntityInput,
} from '../../src/schema/get-entity.js';
import { normalize, oracle, type Kind, type OracleCase, type Typed } from './sqlite-oracle.js';

const LIMITS = { maxPageSize: 10_000, defaultPageSize: 100 };
const RUNS = 300;

let SQL: SqlJsStatic;
beforeAll(async () => {
  SQL = await initSqlJs();
});

// Characters U+E000..U+FFFF sort differently by UTF-16 code unit (JavaScript, our rule) and by code
// point (SQLite's UTF-8 memcmp) against astral characters; docs/semantics.md records the difference.
const text = fc.oneof(
  fc.constantFrom('a', 'b', 'A', 'ab', 'ba', 'abc', 'é', 'e\u0301', '😀', 'a😀', 'Z', '10', '9', ' a', 'a '),
  fc.constantFrom('TRUE', 'FALSE', '0', '-1', '3', '0.5'),
  fc.string({ unit: 'grapheme', maxLength: 4 }).filter((s) => !/[\uE000-\uFFFF]/.test(s)),
);
const number = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.constantFrom(0.5, -0.5, 1e-9),
);

/** A raw cell for a column kind, and the value SQLite gets for it (the rules of docs/semantics.md). */
function cellFor(
  kind: Kind,
  numbers: fc.Arbitrary<number> = number,
  texts: fc.Arbitrary<string> = text,
): fc.Arbitrary<{ cell: CellValue; value: Typed }> {
  const empty = fc.constantFrom<CellValue>(null, '', '  ').map((cell) => ({ cell, value: null }));
  if (kind === 'NUMBER')
    return fc.oneof(
      empty,
      numbers.map((n) => ({ cell: n, value: n })),
      fc.integer({ min: -20, max: 20 }).map((n) => ({ cell: ` ${n} `, value: n })),
    );
  if (kind === 'BOOLEAN')
    return fc.oneof(
      empty,
      fc.boolean().map((b) => ({ cell: b, value: b })),
      fc.constantFrom('TRUE', 'false', 'True').map((s) => ({ cell: s, value: s.toLowerCase() === 'true' })),
    );
  return fc.oneof(
    empty,
    texts.map((s) => ({ cell: s, value: s.trim() === '' ? null : s })),
  );
}

interface Case extends OracleCase {
  cells: CellValue[][];
}

const kinds = fc.array(fc.constantFrom<Kind>('NUMBER', 'STRING', 'BOOLEAN'), { minLength: 1, maxLength: 4 });

function valueFor(
  kind: Kind,
  rows: Typed[][],
  c: number,
): fc.Arbitrary<{ value: unknown; value_type?: Kind }> {
  const seen = rows.map((row) => row[c]).filter((v): v is string | number | boolean => v !== null);
  const fresh: fc.Arbitrary<Typed> = kind === 'NUMBER' ? number : kind === 'BOOLEAN' ? fc.boolean() : text;
  const pick = seen.length > 0 ? fc.oneof(fc.constantFrom(...seen), fresh) : fresh;
  return fc.oneof(
    { weight: 6, arbitrary: pick.map((value) => ({ value })) },
    { weight: 2, arbitrary: pick.map((value) => ({ value, value_type: kind })) },
    // A number given as text with value_type NUMBER (as a wire would pass it).
    {
      weight: kind === 'NUMBER' ? 2 : 0,
      arbitrary: fc
        .integer({ min: -6, max: 6 })
        .map((n) => ({ value: String(n), value_type: 'NUMBER' as const })),
    },
    { weight: 1, arbitrary: fc.constant({ value: null }) },
  );
}

/**
 * A value of another type that the column's rules turn into one of its own (docs/semantics.md):
 * numbers and booleans for a STRING column, numeric text for a NUMBER column; `typed` is the value
 * SQLite gets.
 */
function crossValueFor(
  kind: Kind,
  rows: Typed[][],
  c: number,
): fc.Arbitrary<{ value: unknown; typed: Typed }> {
  const seen = rows
    .map((row) => row[c])
    .filter((v): v is string | number => typeof v !== 'boolean' && v !== null);
  if (kind === 'NUMBER') {
    const numbers = [
      ...seen.filter((v): v is number => typeof v === 'number' && Number.isInteger(v)),
      -1,
      0,
      3,
    ];
    return fc
      .record({ n: fc.constantFrom(...numbers), pad: fc.constantFrom('', ' ', '  ') })
      .map(({ n, pad }) => ({ value: `${pad}${Object.is(n, -0) ? '-0' : String(n)}${pad}`, typed: n }));
  }
  if (kind === 'STRING')
    return fc.oneof(
      fc.constantFrom(-1, 0, 3, 10, 9, 0.5).map((n) => ({ value: n, typed: String(n) })),
      fc.boolean().map((b) => ({ value: b, typed: b ? 'TRUE' : 'FALSE' })),
    );
  return fc
    .constantFrom('true', 'FALSE', ' True ')
    .map((v) => ({ value: v, typed: v.trim().toLowerCase() === 'true' }));
}

/** A piece (prefix, middle or suffix) of a text already in the column, for the text operators. */
function pieceOf(rows: Typed[][], c: number): fc.Arbitrary<{ value: unknown }> {
  const seen = rows.map((row) => row[c]).filter((v): v is string => typeof v === 'string');
  if (seen.length === 0) return fc.constant({ value: '' });
  return fc.record({ s: fc.constantFrom(...seen), a: fc.nat(), b: fc.nat() }).map(({ s, a, b }) => {
    const chars = [...s];
    const from = a % (chars.length + 1);
    return { value: chars.slice(from, from + (b % (chars.length + 1 - from + 1))).join('') };
  });
}

/** Filters of `EQUALS` / `IN` carry the SQL value of each item in `typed` (see {@link crossValueFor}). */
type OracleFilter = Filter & { typed?: (Typed | undefined)[] };

/** An item of an `EQUALS` / `IN` value: `typed` is its SQL value when the test gives it. */
interface Item {
  value: unknown;
  value_type?: Kind;
  typed: Typed | undefined;
}

function filterFor(
  names: string[],
  kindsOf: Kind[],
  rows: Typed[][],
  equality = false,
): fc.Arbitrary<OracleFilter> {
  return fc.integer({ min: 0, max: names.length - 1 }).chain((c) => {
    const kind = kindsOf[c]!;
    const operators = FILTER_OPERATORS.filter(
      (op) => kind === 'STRING' || !['CONTAINS', 'STARTS_WITH', 'ENDS_WITH'].includes(op),
    );
    const operator = equality
      ? fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom<Filter['operator']>('EQUALS', 'IN') },
          { weight: 1, arbitrary: fc.constantFrom(...operators) },
        )
      : fc.constantFrom(...operators);
    return operator.chain((operator): fc.Arbitrary<OracleFilter> => {
      const column = names[c]!;
      if (equality && (operator === 'EQUALS' || operator === 'IN')) {
        const item: fc.Arbitrary<Item> = fc.oneof(
          valueFor(kind, rows, c).map((v): Item => ({ ...v, typed: undefined })),
          crossValueFor(kind, rows, c),
        );
        if (operator === 'EQUALS')
          return item.map(({ typed, ...v }) => ({ column, operator, ...v, typed: [typed] }));
        // IN lists without value_type, so that every item is read by the column's rules alone.
        return fc
          .array(
            item.filter((v) => v.value_type === undefined),
            { maxLength: 5 },
          )
          .map((items) => ({
            column,
            operator,
            value: items.map((v) => v.value),
            typed: items.map((v) => v.typed),
          }));
      }
      if (operator === 'IS_NULL' || operator === 'IS_NOT_NULL') return fc.constant({ column, operator });
      const one = ['CONTAINS', 'STARTS_WITH', 'ENDS_WITH'].includes(operator)
        ? fc.oneof(valueFor(kind, rows, c), pieceOf(rows, c))
        : valueFor(kind, rows, c);
      if (operator === 'IN' || operator === 'NOT_IN')
        return fc
          .array(one, { maxLength: 4 })
          .map((items) => ({ column, operator, value: items.map((item) => item.value) }));
      return one.map((v) => ({ column, operator, ...v }));
    });
  });
}

/** Random reads; `focused` reads have exactly one filter, no order and one page with every row. */
const caseArb = (focused: boolean, equality = false, maxRows = 30): fc.Arbitrary<Case> =>
  kinds.chain((kindsOf) => {
    const names = kindsOf.map((_, c) => `c${c}`);
    const row = fc.tuple(...kindsOf.map((kind) => cellFor(kind)));
    return fc
      .record({
        rows: fc.array(row, { maxLength: maxRows, ...(maxRows > 30 ? { size: 'max' as const } : {}) }),
        reversed: fc.boolean(),
      })
      .chain(({ rows: generated, reversed }) => {
        // A row whose cells are all empty ends the table (tested on its own), so leave such rows out.
        const kept = generated.filter((r) => r.some((cell) => cell.value !== null));
        const typed = kept.map((r) => r.map((cell) => cell.value));
        // The header lists the columns in another order, with an unrelated column between them.
        const order = names.map((_, c) => c);
        if (reversed) order.reverse();
        const header: CellValue[] = ['ignored', ...order.map((c) => names[c]!)];
        const cells: CellValue[][] = [header, ...kept.map((r) => ['x', ...order.map((c) => r[c]!.cell)])];
        const select = fc.array(
          fc.record({ c: fc.integer({ min: 0, max: names.length - 1 }), alias: fc.boolean() }),
          { maxLength: 4 },
        );
        const operation = fc.record(
          {
            select_columns: select.map((items) =>
              items.map((item, i) =>
                item.alias ? { column: names[item.c]!, alias: `out${i}` } : { column: names[item.c]! },
              ),
            ),
            filters: focused
              ? fc.array(filterFor(names, kindsOf, typed, equality), { minLength: 1, maxLength: 1 })
              : fc.array(filterFor(names, kindsOf, typed, equality), { maxLength: 3 }),
            order_by: fc.array(
              fc.record({
                column: fc.constantFrom(...names),
                direction: fc.constantFrom('ASC' as const, 'DESC' as const),
              }),
              { maxLength: 3 },
            ),
          },
          { requiredKeys: [] },
        );
        return fc
          .record({
            operation,
            page_size: fc.integer({ min: 1, max: 8 }),
            page_number: fc.integer({ min: 1, max: 3 }),
            paging: fc.constantFrom('none', 'size', 'both'),
          })
          .map(({ operation: op, page_size, page_number, paging }) => {
            // Repeating a column without an alias would give duplicate output names: alias repeats.
            const used = new Set<string>();
            const select_columns = op.select_columns?.map((item, i) => {
              const name = item.alias ?? item.column;
              const out = used.has(name) ? { column: item.column, alias: `dup${i}` } : item;
              used.add(out.alias ?? out.column);
              return out;
            });
            const filters = op.filters?.map(({ typed: _typed, ...filter }) => filter);
            const sqlValues = op.filters?.map((filter) => filter.typed) ?? [];
            const input: GetEntityInput = {
              entity_name: 't',
              operation: {
                ...op,
                ...(filters ? { filters } : {}),
                ...(select_columns ? { select_columns } : {}),
              },
            };
            if (paging !== 'none') input.page_size = page_size;
            if (paging === 'both') input.page_number = page_number;
            if (focused)
              return {
                kinds: kindsOf,
                rows: typed,
                cells,
                input: {
                  entity_name: 't',
                  operation: { filters: filters?.slice(0, 1) ?? [] },
                  page_size: 10_000,
                },
                sqlValues: sqlValues.slice(0, 1),
              };
            return { kinds: kindsOf, rows: typed, cells, input, sqlValues };
          });
      });
  });

/**
 * Numbers of the grouped reads: quarters, so that sums and averages are exact in doubles whatever
 * the order of addition (SQLite adds with compensation), with few distinct values, so groups repeat.
 */
const quarter = fc.integer({ min: -12, max: 12 }).map((n) => n / 4);
const groupText = fc.constantFrom('a', 'b', 'A', 'ab', 'é', 'e\u0301', '😀', '10', '9', ' a');

/**
 * Random aggregate reads: 0 to 3 group columns, 0 to 4 aggregates (at least one of the two), random
 * filters, order keys among the output columns, paging.
 */
const groupedArb = (maxRows = 40): fc.Arbitrary<Case> =>
  kinds.chain((kindsOf) => {
    const names = kindsOf.map((_, c) => `c${c}`);
    const row = fc.tuple(...kindsOf.map((kind) => cellFor(kind, quarter, groupText)));
    return fc.array(row, { maxLength: maxRows }).chain((generated) => {
      const kept = generated.filter((r) => r.some((cell) => cell.value !== null));
      const typed = kept.map((r) => r.map((cell) => cell.value));
      const cells: CellValue[][] = [names, ...kept.map((r) => r.map((cell) => cell.cell))];
      const numeric = names.filter((_, c) => kindsOf[c] === 'NUMBER');
      const aggregate: fc.Arbitrary<Omit<Aggregate, 'alias'>> = fc
        .constantFrom(...AGGREGATE_FUNCTIONS)
        .chain((fn): fc.Arbitrary<Omit<Aggregate, 'alias'>> => {
          if (fn === 'count')
            return fc
              .option(fc.constantFrom(...names), { nil: undefined })
              .map((column) => (column === undefined ? { function: fn } : { function: fn, column }));
          const among = fn === 'sum' || fn === 'avg' ? numeric : names;
          if (among.length === 0) return fc.constant({ function: 'count' as const });
          return fc.constantFrom(...among).map((column) => ({ function: fn, column }));
        });
      return fc
        .record({
          group_by: fc.shuffledSubarray(names, { maxLength: Math.min(3, names.length) }),
          aggregates: fc.array(aggregate, { maxLength: 4 }),
          filters: fc.array(filterFor(names, kindsOf, typed), { maxLength: 2 }),
          order: fc.array(
            fc.record({ at: fc.nat(), direction: fc.constantFrom('ASC' as const, 'DESC' as const) }),
            {
              maxLength: 3,
            },
          ),
          page_size: fc.integer({ min: 1, max: 6 }),
          page_number: fc.integer({ min: 1, max: 3 }),
          paging: fc.constantFrom('none', 'size', 'both'),
        })
        .filter((r) => r.group_by.length > 0 || r.aggregates.length > 0)
        .map((r) => {
          const aggregates = r.aggregates.map((a, i): Aggregate => ({ ...a, alias: `a${i}` }));
          const outputs = [...r.group_by, ...aggregates.map((a) => a.alias)];
          const order_by = r.order.map((o) => ({
            column: outputs[o.at % outputs.length]!,
            direction: o.direction,
          }));
          const filters = r.filters.map(({ typed: _typed, ...filter }) => filter);
          const input: GetEntityInput = {
            entity_name: 't',
            operation: {
              ...(r.group_by.length > 0 ? { group_by: r.group_by } : {}),
              ...(aggregates.length > 0 ? { aggregates } : {}),
              ...(filters.length > 0 ? { filters } : {}),
              ...(order_by.length > 0 ? { order_by } : {}),
            },
          };
          if (r.paging !== 'none') input.page_size = r.page_size;
          if (r.paging === 'both') input.page_number = r.page_number;
          return { kinds: kindsOf, rows: typed, cells, input, sqlValues: r.filters.map((f) => f.typed) };
        });
    });
  });

const cases = caseArb(false);

function entityOf(kindsOf: Kind[]): Entity {
  return {
    name: 't',
    columns: kindsOf.map((type, c) => ({ name: `c${c}`, type })),
    primary_key: ['c0'],
    spreadsheet_config: { spreadsheet_id: 'sheet', sheet_name: 'Data', origin: { row: 2, col: 1 } },
  };
}

describe('entity read against SQLite', () => {
  /** Both plans, with the hash indexes and with scans only, give what SQLite gives. */
  const agrees = (c: Case): void => {
    const table = mapSheet(entityOf(c.kinds), c.cells);
    expect(table.length).toBe(c.rows.length);
    const scanned = executeRead('t', table, c.input, LIMITS, { indexes: false });
    const indexed = executeRead('t', table, c.input, LIMITS);
    expect(indexed.body.error).toEqual({ is_error: false, errors: [] });
    expect(scanned).toEqual(indexed);
    const db = new SQL.Database();
    try {
      expect(normalize(indexed.body.table.rows ?? [])).toEqual(normalize(oracle(db, c)));
    } finally {
      db.close();
    }
    // An EQUALS or IN filter on a number or text column is answered through that column's index
    // (when the page starts within the table: else the read stops before filtering).
    const equality = (c.input.operation.filters ?? []).filter(
      (f) =>
        (f.operator === 'IN' || (f.operator === 'EQUALS' && f.value !== null)) &&
        c.kinds[Number(f.column.slice(1))] !== 'BOOLEAN',
    );
    const offset = ((c.input.page_number ?? 1) - 1) * (c.input.page_size ?? 100);
    if (equality.length > 0 && offset < table.length)
      expect(equality.some((f) => hasColumnIndex(table, Number(f.column.slice(1))))).toBe(true);
  };

  it('keeps exactly the rows SQLite keeps for one random filter', () => {
    fc.assert(fc.property(caseArb(true), agrees), { numRuns: RUNS });
  });

  it('returns exactly the rows SQLite returns for random tables and reads', () => {
    fc.assert(fc.property(cases, agrees), { numRuns: RUNS });
  });

  it('keeps exactly the rows SQLite keeps for EQUALS and IN, values of any type, alone or with other filters', () => {
    fc.assert(fc.property(caseArb(true, true, 60), agrees), { numRuns: RUNS });
    fc.assert(fc.property(caseArb(false, true, 60), agrees), { numRuns: RUNS });
  });

  it('groups and aggregates exactly as SQLite does, for random tables and aggregate reads', () => {
    fc.assert(fc.property(groupedArb(), agrees), { numRuns: RUNS });
  });

  it('groups many rows into few groups as SQLite does, over several group columns', () => {
    fc.assert(fc.property(groupedArb(200), agrees), { numRuns: 60 });
  });

  it('names the output columns of an aggregate read: the group columns, then the aliases', () => {
    fc.assert(
      fc.property(groupedArb(), (c) => {
        const output = executeRead('t', mapSheet(entityOf(c.kinds), c.cells), c.input, LIMITS);
        const op = c.input.operation;
        expect(output.body.table.columns?.map((col) => col.name)).toEqual([
          ...(op.group_by ?? []),
          ...(op.aggregates ?? []).map((a) => a.alias),
        ]);
      }),
      { numRuns: 100 },
    );
  });

  it('names the output columns by alias, else by column, in select order', () => {
    fc.assert(
      fc.property(cases, (c) => {
        const output = executeRead('t', mapSheet(entityOf(c.kinds), c.cells), c.input, LIMITS);
        const select = c.input.operation.select_columns;
        const expected =
          select && select.length > 0
            ? select.map((s) => s.alias ?? s.column)
            : c.kinds.map((_, i) => `c${i}`);
        expect(output.body.table.columns?.map((col) => col.name)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it('never throws, whatever the input: bad input comes back as errors', () => {
    const table = mapSheet(entityOf(['NUMBER', 'STRING', 'BOOLEAN']), [
      ['c0', 'c1', 'c2'],
      [1, 'a', true],
    ]);
    const input = fc.oneof(
      fc.anything(),
      fc.record(
        { entity_name: fc.constant('t'), operation: fc.anything(), page_size: fc.anything() },
        { requiredKeys: ['entity_name', 'operation'] },
      ),
      fc.record({
        entity_name: fc.constant('t'),
        operation: fc.record({
          filters: fc.array(
            fc.record(
              {
                column: fc.constantFrom('c0', 'c1', 'c2', 'zz'),
                operator: fc.constantFrom(...FILTER_OPERATORS, 'LIKE'),
                value: fc.jsonValue(),
                value_type: fc.constantFrom('NUMBER', 'STRING', 'BOOLEAN', 'DATE'),
              },
              { requiredKeys: ['column', 'operator'] },
            ),
          ),
        }),
      }),
    );
    fc.assert(
      fc.property(input, (value) => {
        const output = executeRead('t', table, value, LIMITS);
        if (output.body.error?.is_error) {
          expect(output.body.table).toEqual({ columns: null, rows: null });
          expect(output.body.error.errors?.length).toBeGreaterThan(0);
        } else expect(Array.isArray(output.body.table.rows)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
