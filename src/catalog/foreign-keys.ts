/**
 * Enforced foreign keys over a planned write: every row written must match a target row, and no
 * row that a source row references may disappear (deleted, or its referenced columns changed).
 * Both look at the entities as they will be after the whole write, so a write may add a target
 * and its source together, or delete a source row and its target together.
 * @module
 */
import type { Issue } from '../errors/index.js';
import type { Entity, Relationship } from '../schema/index.js';
import { describeKey, keyOf } from './rows.js';
import { tableRow, type EntityTable } from './sheet-mapping.js';
import { keyColumns, type WritePlan } from './write-plan.js';

/** Reads an entity that the write does not change. @internal */
export type LoadTable = (name: string) => Promise<{ entity: Entity; table: EntityTable } | undefined>;

/** Every enforced foreign key the planned write would break. @internal */
export async function foreignKeyIssues(
  plans: readonly WritePlan[],
  relationships: readonly Relationship[],
  load: LoadTable,
): Promise<Issue[]> {
  const issues: Issue[] = [];
  const after = new Map<string, { entity: Entity; rows: unknown[][] } | undefined>();
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
      const known = new Set(target.rows.map((row) => keyOf(row, targetColumns)));
      const written = [
        ...plan.rows.map((row, i) => ({ row, input: plan.inputs[i]! })),
        ...plan.updates.filter((u) => sourceColumns.some((c) => u.given[c])),
      ];
      for (const { row, input } of written) {
        // SQL MATCH SIMPLE: a key with an empty column is not checked.
        if (sourceColumns.some((c) => row[c] === null) || known.has(keyOf(row, sourceColumns))) continue;
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
      const remaining = new Set(
        (await final(plan.entity.name))!.rows.map((row) => keyOf(row, targetColumns)),
      );
      const gone = new Map<string, { input: number; row: unknown[]; verb: string }>();
      for (const d of plan.deletes)
        gone.set(keyOf(d.row, targetColumns), { ...d, verb: 'cannot be deleted' });
      for (const u of plan.updates)
        gone.set(keyOf(u.before, targetColumns), { input: u.input, row: u.before, verb: 'cannot change' });
      for (const key of remaining) gone.delete(key);
      if (gone.size === 0) continue;
      const source = await final(rel.source_entity);
      if (!source) continue;
      const sourceColumns = columnsOf(source.entity, config.source_columns);
      for (const row of source.rows) {
        if (sourceColumns.some((c) => row[c] === null)) continue;
        const key = keyOf(row, sourceColumns);
        const lost = gone.get(key);
        if (!lost) continue;
        gone.delete(key);
        const sourceKey = keyColumns(source.entity);
        issues.push({
          code: 'referenced',
          path: `${plan.entity.name}[${lost.input}]`,
          message: `row ${lost.input + 1} of "${plan.entity.name}" ${describeKey(plan.entity.primary_key, keyColumns(plan.entity), lost.row)} ${lost.verb}: "${source.entity.name}" ${describeKey(source.entity.primary_key, sourceKey, row)} references it on (${config.target_columns.join(', ')}) (relationship "${rel.name}"); change or delete that row first`,
        });
      }
    }
  }
  return issues;
}

/** The rows of an entity as they will be after the write (as they are, when the write leaves it alone). */
async function finalRows(
  name: string,
  plans: readonly WritePlan[],
  load: LoadTable,
): Promise<{ entity: Entity; rows: unknown[][] } | undefined> {
  const own = plans.filter((p) => p.entity.name === name);
  if (own.length === 0) {
    const loaded = await load(name);
    if (!loaded) return undefined;
    return { entity: loaded.entity, rows: rowsOf(loaded.table) };
  }
  const first = own[0]!;
  const replaced = own.findLast((p) => p.mode === 'replace');
  if (replaced)
    return { entity: first.entity, rows: own.slice(own.indexOf(replaced)).flatMap((p) => p.rows) };
  const deleted = new Set(own.flatMap((p) => p.deletes.map((d) => d.index)));
  const updated = new Map(own.flatMap((p) => p.updates.map((u) => [u.index, u.row] as const)));
  const rows: unknown[][] = [];
  const table = first.loaded.table;
  for (let i = 0; i < table.length; i++) if (!deleted.has(i)) rows.push(updated.get(i) ?? tableRow(table, i));
  for (const plan of own) rows.push(...plan.rows);
  return { entity: first.entity, rows };
}

function rowsOf(table: EntityTable): unknown[][] {
  const rows: unknown[][] = new Array(table.length);
  for (let i = 0; i < table.length; i++) rows[i] = tableRow(table, i);
  return rows;
}

function columnsOf(entity: Entity, names: readonly string[]): number[] {
  return names.map((n) => entity.columns.findIndex((c) => c.name === n));
}
