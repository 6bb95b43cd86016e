/**
 * Enforced foreign keys over a planned write: every row written must match a target row, and no
 * row that a source row references may disappear (deleted, or its referenced columns changed).
 * Both look at the entities as they will be after the whole write, so a write may add a target
 * and its source together, or delete a source row and its target together. Rows of the tables are
 * found through their columns' hash indexes; only the rows the write itself adds or changes are
 * looked at one by one.
 * @module
 */
import type { Issue } from '../errors/index.js';
import { rowsWithKey } from '../query/hash-index.js';
import type { Entity, Relationship } from '../schema/index.js';
import { describeKey, keyOf } from './rows.js';
import { tableRow, type EntityTable } from './sheet-mapping.js';
import { keyColumns, type WritePlan } from './write-plan.js';

/** Reads an entity that the write does not change. @internal */
export type LoadTable = (name: string) => Promise<{ entity: Entity; table: EntityTable } | undefined>;

/**
 * An entity as it will be after the write: the table's rows (none after a replace) less the
 * deleted ones, the updated ones changed in place, then the rows added. A row's position is its
 * table index, or the table's length plus its place among the added rows.
 */
class FinalRows {
  readonly entity: Entity;
  readonly #table: EntityTable | undefined;
  readonly #deleted: ReadonlySet<number>;
  readonly #updated: ReadonlyMap<number, unknown[]>;
  readonly #added: readonly unknown[][];
  /** Positions of the updated and added rows by their key on some columns, first position first. */
  readonly #written = new Map<string, Map<string, number>>();

  constructor(
    entity: Entity,
    table: EntityTable | undefined,
    changes: { deleted?: ReadonlySet<number>; updated?: ReadonlyMap<number, unknown[]>; added?: unknown[][] },
  ) {
    this.entity = entity;
    this.#table = table;
    this.#deleted = changes.deleted ?? new Set();
    this.#updated = changes.updated ?? new Map();
    this.#added = changes.added ?? [];
  }

  /** Whether some row holds `values` in `columns`; never, when a value is null. */
  holds(columns: readonly number[], values: readonly unknown[]): boolean {
    return this.first(columns, values) !== undefined;
  }

  /** The first row (by position) holding `values` in `columns`, or `undefined`; none for a null value. */
  first(
    columns: readonly number[],
    values: readonly unknown[],
  ): { position: number; row: readonly unknown[] } | undefined {
    if (values.some((v) => v === null || v === undefined)) return undefined;
    let best: { position: number; row: readonly unknown[] } | undefined;
    if (this.#table)
      for (const r of rowsWithKey(this.#table, columns, values))
        if (!this.#deleted.has(r) && !this.#updated.has(r)) {
          best = { position: r, row: tableRow(this.#table, r) };
          break;
        }
    const position = this.#writtenKeys(columns).get(
      keyOf(
        values,
        values.map((_, k) => k),
      ),
    );
    if (position !== undefined && (best === undefined || position < best.position))
      best = { position, row: this.#rowAt(position) };
    return best;
  }

  #writtenKeys(columns: readonly number[]): Map<string, number> {
    const name = columns.join(',');
    let keys = this.#written.get(name);
    if (!keys) {
      keys = new Map();
      const base = this.#table?.length ?? 0;
      const rows = [...this.#updated]
        .filter(([r]) => !this.#deleted.has(r))
        .concat(this.#added.map((row, k) => [base + k, row]));
      for (const [position, row] of rows) {
        const key = keyOf(row, columns);
        if ((keys.get(key) ?? Infinity) > position) keys.set(key, position);
      }
      this.#written.set(name, keys);
    }
    return keys;
  }

  #rowAt(position: number): readonly unknown[] {
    const base = this.#table?.length ?? 0;
    return position < base ? this.#updated.get(position)! : this.#added[position - base]!;
  }
}

/** Every enforced foreign key the planned write would break. @internal */
export async function foreignKeyIssues(
  plans: readonly WritePlan[],
  relationships: readonly Relationship[],
  load: LoadTable,
): Promise<Issue[]> {
  const issues: Issue[] = [];
  const after = new Map<string, FinalRows | undefined>();
  const final = async (name: string) => {
    if (!after.has(name)) after.set(name, await finalRows(name, plans, load));
    return after.get(name);
  };
  for (const rel of relationships) {
    const config = rel.foreign_key_config;
    for (const plan of plans.filter((p) => p.entity.name === rel.source_entity && p.mode !== 'delete')) {
      const target = await final(rel.target_entity);
      if (!target) continue;
      const targetColumns = columnsOf(target.entity, config.target_columns);
      const sourceColumns = columnsOf(plan.entity, config.source_columns);
      const written = [
        ...plan.rows.map((row, i) => ({ row, input: plan.inputs[i]! })),
        ...plan.updates.filter((u) => sourceColumns.some((c) => u.given[c])),
      ];
      for (const { row, input } of written) {
        // SQL MATCH SIMPLE: a key with an empty column is not checked.
        const values = sourceColumns.map((c) => row[c]);
        if (values.some((v) => v === null) || target.holds(targetColumns, values)) continue;
        issues.push({
          code: 'foreign_key',
          path: `${plan.entity.name}[${input}]`,
          message: `row ${input + 1} of "${plan.entity.name}" has ${describeKey(config.source_columns, sourceColumns, row)}, which matches no row of "${target.entity.name}" on (${config.target_columns.join(', ')}) (relationship "${rel.name}")`,
        });
      }
    }
    for (const plan of plans.filter((p) => p.entity.name === rel.target_entity)) {
      if (plan.deletes.length === 0 && plan.updates.length === 0) continue;
      const targetColumns = columnsOf(plan.entity, config.target_columns);
      const remaining = (await final(plan.entity.name))!;
      const gone = new Map<string, { input: number; row: unknown[]; verb: string }>();
      for (const d of plan.deletes)
        gone.set(keyOf(d.row, targetColumns), { ...d, verb: 'cannot be deleted' });
      for (const u of plan.updates)
        gone.set(keyOf(u.before, targetColumns), { input: u.input, row: u.before, verb: 'cannot change' });
      const lost = [...gone.values()].filter(
        (g) =>
          !remaining.holds(
            targetColumns,
            targetColumns.map((c) => g.row[c]),
          ),
      );
      if (lost.length === 0) continue;
      const source = await final(rel.source_entity);
      if (!source) continue;
      const sourceColumns = columnsOf(source.entity, config.source_columns);
      const sourceKey = keyColumns(source.entity);
      // One issue per lost row, at the first source row referencing it, in the order of those rows.
      const found = lost.flatMap((g) => {
        const ref = source.first(
          sourceColumns,
          targetColumns.map((c) => g.row[c]),
        );
        return ref ? [{ ...ref, lost: g }] : [];
      });
      for (const { row, lost: g } of found.sort((a, b) => a.position - b.position))
        issues.push({
          code: 'referenced',
          path: `${plan.entity.name}[${g.input}]`,
          message: `row ${g.input + 1} of "${plan.entity.name}" ${describeKey(plan.entity.primary_key, keyColumns(plan.entity), g.row)} ${g.verb}: "${source.entity.name}" ${describeKey(source.entity.primary_key, sourceKey, row)} references it on (${config.target_columns.join(', ')}) (relationship "${rel.name}"); change or delete that row first`,
        });
    }
  }
  return issues;
}

/** An entity as it will be after the write (as it is, when the write leaves it alone). */
async function finalRows(
  name: string,
  plans: readonly WritePlan[],
  load: LoadTable,
): Promise<FinalRows | undefined> {
  const own = plans.filter((p) => p.entity.name === name);
  if (own.length === 0) {
    const loaded = await load(name);
    return loaded && new FinalRows(loaded.entity, loaded.table, {});
  }
  const first = own[0]!;
  const replaced = own.findLast((p) => p.mode === 'replace');
  if (replaced)
    return new FinalRows(first.entity, undefined, {
      added: own.slice(own.indexOf(replaced)).flatMap((p) => p.rows),
    });
  return new FinalRows(first.entity, first.loaded.table, {
    deleted: new Set(own.flatMap((p) => p.deletes.map((d) => d.index))),
    updated: new Map(own.flatMap((p) => p.updates.map((u) => [u.index, u.row] as const))),
    added: own.flatMap((p) => p.rows),
  });
}

function columnsOf(entity: Entity, names: readonly string[]): number[] {
  return names.map((n) => entity.columns.findIndex((c) => c.name === n));
}
