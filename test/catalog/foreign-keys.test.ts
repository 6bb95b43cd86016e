/**
 * Property test of the foreign-key checks, which find rows through hash indexes: for random
 * tables and random writes (appends, replaces, upserts, updates, deletes, one entity or both),
 * the issues are exactly those of a naive model that materializes every row each entity will
 * hold after the write and compares keys as JSON text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CellValue } from '../../src/adapters/types.js';
import type { Issue } from '../../src/errors/index.js';
import { foreignKeyIssues } from '../../src/catalog/foreign-keys.js';
import { describeKey, type EntityRows } from '../../src/catalog/rows.js';
import { mapSheet, tableRow, type EntityTable } from '../../src/catalog/sheet-mapping.js';
import { keyColumns, planEntityWrite, type WritePlan } from '../../src/catalog/write-plan.js';
import type { Entity, Relationship, WriteMode } from '../../src/schema/index.js';

const config = (sheet: string) => ({ spreadsheet_id: 'book', sheet_name: sheet, origin: { row: 0, col: 0 } });
/** Targets: key `a`; `(a, b)` is referenced too, so a target row may change without its key. */
const target: Entity = {
  name: 'target',
  columns: [
    { name: 'a', type: 'NUMBER' },
    { name: 'b', type: 'STRING' },
  ],
  primary_key: ['a'],
  spreadsheet_config: config('target'),
};
const source: Entity = {
  name: 'source',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'x', type: 'NUMBER' },
    { name: 'y', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: config('source'),
};
const ENTITIES: Record<string, Entity> = { target, source };

function relationship(name: string, sourceColumns: string[], targetColumns: string[]): Relationship {
  return {
    name,
    relationship_type: 'foreign_key',
    source_entity: 'source',
    target_entity: 'target',
    foreign_key_config: {
      source_columns: sourceColumns,
      target_columns: targetColumns,
      enforce_foreign_key: true,
    },
  } as Relationship;
}
const RELATIONSHIPS = [relationship('by_a', ['x'], ['a']), relationship('by_a_b', ['x', 'y'], ['a', 'b'])];

const a = fc.integer({ min: 1, max: 4 });
const b = fc.constantFrom<string | null>('p', 'q', null);
const targetRow = fc.tuple(a, b);
const sourceRow = fc.tuple(fc.integer({ min: 1, max: 6 }), fc.option(a, { nil: null, freq: 8 }), b);
const modes = fc.constantFrom<WriteMode>('append', 'replace', 'upsert', 'update', 'delete');
/** One part of a write: rows of the entity's shape (keys only, for a delete); mostly target rows going. */
const part = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      entity: fc.constant('target'),
      mode: fc.constantFrom<WriteMode>('delete', 'update', 'upsert'),
      rows: fc.uniqueArray(targetRow, { minLength: 1, maxLength: 4, selector: (row) => row[0] }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      entity: fc.constant('target'),
      mode: modes,
      rows: fc.array(targetRow, { maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      entity: fc.constant('source'),
      mode: modes,
      rows: fc.array(sourceRow, { maxLength: 3 }),
    }),
  },
);

function tableOf(entity: Entity, rows: readonly (readonly CellValue[])[]): EntityTable {
  return mapSheet(entity, [entity.columns.map((c) => c.name), ...rows.map((r) => [...r])]);
}

function inputRows(entity: Entity, mode: WriteMode, rows: readonly (readonly unknown[])[]): EntityRows {
  if (mode !== 'delete') return rows;
  return rows.map((row) =>
    Object.fromEntries(keyColumns(entity).map((c) => [entity.columns[c]!.name, row[c]])),
  );
}

/** Plans as the catalog makes them (appends to one entity merged; other repeats left out). */
function plansOf(
  parts: readonly { entity: string; mode: WriteMode; rows: unknown[][] }[],
  tables: Record<string, EntityTable>,
): WritePlan[] {
  const plans: WritePlan[] = [];
  for (const p of parts) {
    const entity = ENTITIES[p.entity]!;
    const earlier = plans.find((plan) => plan.entity.name === p.entity);
    if (earlier && (earlier.mode !== 'append' || p.mode !== 'append')) continue;
    const loaded = {
      table: tables[p.entity]!,
      headerIndexes: entity.columns.map((_, c) => c),
      headerWidth: entity.columns.length,
      revision: 1,
      keyCells: new Map(),
    };
    const plan = planEntityWrite(
      entity,
      p.mode,
      inputRows(entity, p.mode, p.rows),
      loaded,
      earlier?.rows ?? [],
      [],
    );
    if (!earlier) plans.push(plan);
    else {
      earlier.rows.push(...plan.rows);
      earlier.inputs.push(...plan.inputs);
    }
  }
  return plans;
}

/** The naive model: every row after the write, in order, and keys as JSON text. */
function modelIssues(plans: readonly WritePlan[], tables: Record<string, EntityTable>): Issue[] {
  const all = (table: EntityTable) => Array.from({ length: table.length }, (_, i) => tableRow(table, i));
  const after = (name: string): unknown[][] => {
    const plan = plans.find((p) => p.entity.name === name);
    if (!plan) return all(tables[name]!);
    if (plan.mode === 'replace') return plan.rows;
    const gone = new Set(plan.deletes.map((d) => d.index));
    const changed = new Map(plan.updates.map((u) => [u.index, u.row]));
    const kept = all(plan.loaded.table).flatMap((row, i) => (gone.has(i) ? [] : [changed.get(i) ?? row]));
    return [...kept, ...plan.rows];
  };
  const text = (row: readonly unknown[], columns: number[]) =>
    JSON.stringify(columns.map((c) => row[c] ?? null));
  const positions = (entity: Entity, names: string[]) =>
    names.map((n) => entity.columns.findIndex((c) => c.name === n));
  const issues: Issue[] = [];
  for (const rel of RELATIONSHIPS) {
    const { source_columns: sourceNames, target_columns: targetNames } = rel.foreign_key_config;
    const s = positions(source, sourceNames);
    const t = positions(target, targetNames);
    const sourcePlan = plans.find((p) => p.entity.name === 'source' && p.mode !== 'delete');
    if (sourcePlan) {
      const known = new Set(after('target').map((row) => text(row, t)));
      const written = [
        ...sourcePlan.rows.map((row, i) => ({ row, input: sourcePlan.inputs[i]! })),
        ...sourcePlan.updates.filter((u) => s.some((c) => u.given[c])),
      ];
      for (const { row, input } of written)
        if (!s.some((c) => row[c] === null) && !known.has(text(row, s)))
          issues.push({
            code: 'foreign_key',
            path: `source[${input}]`,
            message: `row ${input + 1} of "source" has ${describeKey(sourceNames, s, row)}, which matches no row of "target" on (${targetNames.join(', ')}) (relationship "${rel.name}")`,
          });
    }
    const targetPlan = plans.find((p) => p.entity.name === 'target');
    if (!targetPlan || targetPlan.deletes.length + targetPlan.updates.length === 0) continue;
    const gone = new Map<string, { input: number; row: unknown[]; verb: string }>();
    for (const d of targetPlan.deletes) gone.set(text(d.row, t), { ...d, verb: 'cannot be deleted' });
    for (const u of targetPlan.updates)
      gone.set(text(u.before, t), { input: u.input, row: u.before, verb: 'cannot change' });
    for (const row of after('target')) gone.delete(text(row, t));
    for (const row of after('source')) {
      const lost = s.some((c) => row[c] === null) ? undefined : gone.get(text(row, s));
      if (!lost) continue;
      gone.delete(text(row, s));
      issues.push({
        code: 'referenced',
        path: `target[${lost.input}]`,
        message: `row ${lost.input + 1} of "target" ${describeKey(['a'], [0], lost.row)} ${lost.verb}: "source" ${describeKey(['id'], [0], row)} references it on (${targetNames.join(', ')}) (relationship "${rel.name}"); change or delete that row first`,
      });
    }
  }
  return issues;
}

describe('foreign keys through indexes', () => {
  it('report exactly what the naive model reports, for random tables and writes', async () => {
    // Source rows mostly reference an existing target row, by `a` and often by `(a, b)` too.
    const cases = fc
      .uniqueArray(targetRow, { minLength: 1, maxLength: 4, selector: (row) => row[0] })
      .chain((targets) => {
        const referencing = fc
          .tuple(fc.integer({ min: 1, max: 6 }), fc.constantFrom(...targets), fc.boolean())
          .map(([id, [x, y], same]): [number, number | null, string | null] => [id, x, same ? y : 'p']);
        const row = fc.oneof({ weight: 3, arbitrary: referencing }, { weight: 1, arbitrary: sourceRow });
        return fc.record({
          targets: fc.constant(targets),
          sources: fc.uniqueArray(row, { maxLength: 6, selector: (r) => r[0] }),
          parts: fc.array(part, { minLength: 1, maxLength: 2 }),
        });
      });
    await fc.assert(
      fc.asyncProperty(cases, async ({ targets, sources, parts }) => {
        const tables = { target: tableOf(target, targets), source: tableOf(source, sources) };
        const plans = plansOf(parts, tables);
        const load = (name: string) =>
          Promise.resolve({ entity: ENTITIES[name]!, table: tables[name as 'source']! });
        expect(await foreignKeyIssues(plans, RELATIONSHIPS, load)).toEqual(modelIssues(plans, tables));
      }),
      { numRuns: 400 },
    );
  });
});
