/**
 * The values of computed columns: an entity's stored table widened with its formulas, lookups and
 * rollups, in entity column order, so that reads filter, sort and page them as stored columns.
 *
 * Columns are computed one by one, each from the columns it reads (so customers may roll up orders
 * while orders look up customers: only a cycle of columns is refused). A computed column is kept with
 * what it was made from: the stored tables it read (the sheet cache keeps one object per sheet
 * revision) and the principal's rules on each entity. While those are the same, it is not computed
 * again: a rollup over 100,000 rows is summed once per revision of the sheets it reads, not per read.
 * @module
 */
import type { EntityAccess } from '../access/grants.js';
import { ValidationError } from '../errors/index.js';
import { compileFilter } from '../query/filters.js';
import { rowsMatchingRules } from '../query/execute.js';
import type { ColumnData, EntityTable } from '../query/entity-table.js';
import { planRead } from '../query/plan.js';
import { GetEntityInputSchema } from '../schema/get-entity.js';
import type { Entity, EntityColumn, Relationship } from '../schema/index.js';
import { check, quoteName } from '../schema/issues.js';
import { computedKind, hasComputed, storedEntity } from './columns.js';
import { compileExpression, RESULT_TYPES } from './expression.js';
import { empty, formulaValues, lookupValues, rollupValues } from './values.js';

/** Where computed columns read from. @internal */
export interface ComputeSource {
  /** The stored definition of an entity. */
  definition(name: string): Promise<Entity | undefined>;
  /** The stored table of an entity (made by {@link storedEntity}), from the sheet cache. */
  storedTable(stored: Entity): Promise<EntityTable>;
  /** Every relationship. */
  relationships(): Promise<readonly Relationship[]>;
}

/**
 * What a principal may read of an entity: its access, `none` when it may not read the entity, or
 * undefined when nothing is restricted. @internal
 */
export type ReadAccessOf = (entity: Entity) => EntityAccess | 'none' | undefined;

/** An entity's table with its computed columns, and the computed columns hidden from the principal. @internal */
export interface ComputedTable {
  table: EntityTable;
  /** Computed columns that read what the principal may not see: absent for it, as hidden columns are. */
  hidden: ReadonlySet<string>;
}

/**
 * A computed column that cannot be computed any more (its relationship or a column it reads gone or
 * changed since it was registered): a validation error naming it. @internal
 */
export function computedColumnError(message: string): ValidationError {
  return new ValidationError([{ code: 'invalid_definition', path: 'columns', message }]);
}

const NO_HIDDEN: ReadonlySet<string> = new Set();
const RULE_LIMITS = { maxPageSize: 1, defaultPageSize: 1 };
/** Longest chain of computed columns one column may read through. */
const MAX_DEPTH = 32;
/** Values kept per computed column: one per set of principal rules seen lately. */
const MAX_KEPT = 8;

/** What a computed column's values were made from: per entity read, its stored table and the rules. */
type Made = readonly (readonly [string, EntityTable, string])[];

interface ColumnResult {
  data: ColumnData;
  hidden: boolean;
  made: Made;
}

/** One entity as one computation sees it. */
interface Known {
  entity: Entity;
  base: EntityTable;
  access: EntityAccess | 'none' | undefined;
  signature: string;
}

/** Computed columns, kept per entity definition object and column across reads. @internal */
export class ComputedTables {
  readonly #kept = new WeakMap<Entity, Map<string, ColumnResult[]>>();
  readonly #tables = new WeakMap<Entity, Map<string, ComputedTable & { parts: readonly ColumnData[] }>>();
  /** Computed columns computed (not found kept) so far: what the bench and tests count. */
  computations = 0;

  /** The table of `entity` with its computed columns, as the principal of `access` may read it. */
  async table(entity: Entity, source: ComputeSource, access?: ReadAccessOf): Promise<ComputedTable> {
    if (!hasComputed(entity)) return { table: await source.storedTable(entity), hidden: NO_HIDDEN };
    const run = new Computation(this, source, access);
    const own = await run.known(entity);
    const parts: ColumnData[] = [];
    const hidden = new Set<string>();
    for (const column of entity.columns) {
      const result = await run.column(own, column.name, 0);
      parts.push(result.data);
      if (result.hidden) hidden.add(column.name);
    }
    // The same table object while every column is the same: hash indexes and planned rules are kept with it.
    const key = own.signature;
    let tables = this.#tables.get(entity);
    const last = tables?.get(key);
    if (last && last.table.length === own.base.length && last.parts.every((p, i) => p === parts[i]))
      return last;
    const made = {
      table: {
        columns: entity.columns,
        length: own.base.length,
        data: parts,
        buffers: { filled: own.base.length },
      },
      hidden,
      parts,
    };
    if (!tables) this.#tables.set(entity, (tables = new Map()));
    tables.set(key, made);
    if (tables.size > MAX_KEPT) tables.delete(tables.keys().next().value!);
    return made;
  }

  /** @internal */
  kept(entity: Entity, column: string): ColumnResult[] {
    let byColumn = this.#kept.get(entity);
    if (!byColumn) this.#kept.set(entity, (byColumn = new Map()));
    let list = byColumn.get(column);
    if (!list) byColumn.set(column, (list = []));
    return list;
  }
}

/** One read's computation: entities loaded once, columns computed once. */
class Computation {
  readonly #tables: ComputedTables;
  readonly #source: ComputeSource;
  readonly #access: ReadAccessOf | undefined;
  readonly #known = new Map<string, Promise<Known>>();
  readonly #columns = new Map<string, ColumnResult>();
  #relationships: Promise<Map<string, Relationship>> | undefined;

  constructor(tables: ComputedTables, source: ComputeSource, access: ReadAccessOf | undefined) {
    this.#tables = tables;
    this.#source = source;
    this.#access = access;
  }

  known(entity: Entity): Promise<Known> {
    let known = this.#known.get(entity.name);
    if (!known) {
      known = (async () => {
        const base = await this.#source.storedTable(storedEntity(entity));
        const access = this.#access?.(entity);
        const signature =
          access === undefined
            ? 'all'
            : access === 'none'
              ? 'none'
              : JSON.stringify([access.rows, [...access.hidden].sort()]);
        return { entity, base, access, signature };
      })();
      this.#known.set(entity.name, known);
    }
    return known;
  }

  async #other(name: string): Promise<Known> {
    const entity = await this.#source.definition(name);
    if (!entity) throw computedColumnError(`entity ${quoteName(name)} does not exist`);
    return this.known(entity);
  }

  #relationship(name: string, column: string, entity: Entity): Promise<Relationship> {
    this.#relationships ??= this.#source.relationships().then((all) => new Map(all.map((r) => [r.name, r])));
    return this.#relationships.then((all) => {
      const rel = all.get(name);
      if (!rel)
        throw computedColumnError(
          `column ${quoteName(column)} of ${quoteName(entity.name)} names relationship ${quoteName(name)}, which does not exist`,
        );
      return rel;
    });
  }

  /** The values of one column of an entity, computed or kept. */
  async column(own: Known, name: string, depth: number): Promise<ColumnResult> {
    const id = `${own.entity.name}.${name}`;
    const done = this.#columns.get(id);
    if (done) return done;
    const column = own.entity.columns.find((c) => c.name === name);
    if (!column) throw computedColumnError(`${quoteName(own.entity.name)} has no column ${quoteName(name)}`);
    if (computedKind(column) === undefined) {
      const at = own.base.columns.findIndex((c) => c.name === name);
      const result = {
        data: own.base.data[at]!,
        hidden: false,
        made: [[own.entity.name, own.base, own.signature]] as Made,
      };
      this.#columns.set(id, result);
      return result;
    }
    if (depth > MAX_DEPTH)
      throw computedColumnError(
        `computed column ${quoteName(id)} reads through more than ${MAX_DEPTH} columns, or in a cycle`,
      );
    const kept = this.#tables.kept(own.entity, name);
    for (const candidate of kept)
      if (await this.#current(candidate.made)) {
        this.#columns.set(id, candidate);
        return candidate;
      }
    const result = await this.#compute(own, column, depth);
    this.#tables.computations++;
    kept.unshift(result);
    if (kept.length > MAX_KEPT) kept.pop();
    this.#columns.set(id, result);
    return result;
  }

  /** Whether what a kept column was made from is what this read sees. */
  async #current(made: Made): Promise<boolean> {
    for (const [name, base, signature] of made) {
      const known = await this.#other(name);
      if (known.base !== base || known.signature !== signature) return false;
    }
    return true;
  }

  async #compute(own: Known, column: EntityColumn, depth: number): Promise<ColumnResult> {
    const n = own.base.length;
    const entity = own.entity;
    if (column.formula !== undefined) {
      const compiled = compileExpression(
        column.formula,
        entity.columns,
        RESULT_TYPES[column.type],
        '',
        column.name,
      );
      if (!compiled.ok) throw computedColumnError(compiled.issues.map((i) => i.message).join('; '));
      const expression = compiled.expression;
      const reads = await Promise.all(expression.reads.map((r) => this.column(own, r, depth + 1)));
      const made = merge([[entity.name, own.base, own.signature]], ...reads.map((r) => r.made));
      const ownHidden = own.access && own.access !== 'none' ? own.access.hidden : NO_HIDDEN;
      if (reads.some((r) => r.hidden) || expression.reads.some((r) => ownHidden.has(r)))
        return { data: empty(column, n), hidden: true, made };
      const data = formulaValues(
        column,
        n,
        expression,
        expression.reads.map((r, k) => [r, reads[k]!.data]),
      );
      return { data, hidden: false, made };
    }
    const spec = (column.lookup ?? column.rollup)!;
    const rel = await this.#relationship(spec.relationship, column.name, entity);
    const other = await this.#other(column.lookup ? rel.target_entity : rel.source_entity);
    const base: Made = [
      [entity.name, own.base, own.signature],
      [other.entity.name, other.base, other.signature],
    ];
    const { source_columns, target_columns } = rel.foreign_key_config;
    const ownKeys = keyData(own, column.lookup ? source_columns : target_columns);
    const otherKeys = keyData(other, column.lookup ? target_columns : source_columns);
    const reads = column.lookup
      ? [column.lookup.column]
      : [column.rollup!.column, ...(column.rollup!.filters ?? []).map((f) => f.column)].flatMap(
          (r) => r ?? [],
        );
    const otherHidden = other.access && other.access !== 'none' ? other.access.hidden : NO_HIDDEN;
    const ownHidden = own.access && own.access !== 'none' ? own.access.hidden : NO_HIDDEN;
    // The key columns decide which rows meet: one hidden on either side hides the column as well.
    const ownKeyNames = column.lookup ? source_columns : target_columns;
    const otherKeyNames = column.lookup ? target_columns : source_columns;
    if (
      other.access === 'none' ||
      reads.some((r) => otherHidden.has(r)) ||
      ownKeyNames.some((k) => ownHidden.has(k)) ||
      otherKeyNames.some((k) => otherHidden.has(k))
    )
      return { data: empty(column, n), hidden: true, made: base };
    const results = await Promise.all(
      [...new Set(reads)].map(async (r) => [r, await this.column(other, r, depth + 1)] as const),
    );
    const made = merge(base, ...results.map(([, r]) => r.made));
    if (results.some(([, r]) => r.hidden)) return { data: empty(column, n), hidden: true, made };
    const values = new Map(results.map(([r, result]) => [r, result.data]));
    const visible = visibleRows(other);
    if (column.lookup)
      return {
        data: lookupValues(
          column,
          n,
          ownKeys,
          otherKeys,
          other.base.length,
          visible,
          values.get(column.lookup.column)!,
        ),
        hidden: false,
        made,
      };
    const rows = countedRows(other, column, visible, values);
    const summed = column.rollup!.column === undefined ? undefined : values.get(column.rollup!.column);
    return { data: rollupValues(column, n, ownKeys, otherKeys, rows, summed), hidden: false, made };
  }
}

/** The entries of several `made` lists, each entity once. */
function merge(...lists: Made[]): Made {
  const seen = new Map<string, readonly [string, EntityTable, string]>();
  for (const list of lists) for (const entry of list) if (!seen.has(entry[0])) seen.set(entry[0], entry);
  return [...seen.values()];
}

/** The data of stored key columns of an entity, by name. */
function keyData(known: Known, names: readonly string[]): ColumnData[] {
  return names.map((name) => {
    const at = known.base.columns.findIndex((c) => c.name === name);
    if (at < 0)
      throw computedColumnError(
        `column ${quoteName(name)} of a relationship is no stored column of ${quoteName(known.entity.name)}`,
      );
    return known.base.data[at]!;
  });
}

/**
 * Rows of an entity the principal sees: all (undefined) or a mark per row. The rules are matched
 * against the stored columns: a rule on a computed column matches no row here (a lookup or rollup
 * then reads none of that entity's rows), which never shows more than the rules allow.
 */
function visibleRows(known: Known): Uint8Array | undefined {
  const access = known.access;
  if (!access || access === 'none' || access.rows === 'all') return undefined;
  const table = known.base;
  const all = Array.from({ length: table.length }, (_, i) => i);
  const seen = rowsMatchingRules(known.entity.name, table, access.rows, RULE_LIMITS, all);
  const marks = new Uint8Array(table.length);
  for (const i of seen) marks[i] = 1;
  return marks;
}

/** The rows of the rollup's source that count: seen by the principal and matching its filters. */
function countedRows(
  known: Known,
  column: EntityColumn,
  visible: Uint8Array | undefined,
  values: ReadonlyMap<string, ColumnData>,
): { idx: Uint32Array; n: number } {
  const length = known.base.length;
  const idx = new Uint32Array(length);
  let n = 0;
  for (let i = 0; i < length; i++) if (!visible || visible[i] === 1) idx[n++] = i;
  const filters = column.rollup?.filters;
  if (!filters || filters.length === 0) return { idx, n };
  const entity = known.entity;
  const input = check(GetEntityInputSchema, { entity_name: entity.name, operation: { filters } });
  const planned = input.ok ? planRead(entity.name, entity.columns, input.value, RULE_LIMITS) : undefined;
  if (!planned?.ok)
    throw computedColumnError(
      `the filters of rollup ${quoteName(column.name)} no longer fit entity ${quoteName(entity.name)}`,
    );
  for (const filter of planned.plan.filters) {
    const data = values.get(entity.columns[filter.column]!.name)!;
    n = compileFilter(data, filter)(idx, n);
  }
  return { idx, n };
}
