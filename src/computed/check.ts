/**
 * The checks of computed columns and validation rules when an entity is registered: expressions
 * type-checked against the columns, lookups and rollups against their relationships and the other
 * entity's columns, types matched, and cycles refused by name. Every problem is an issue with a path.
 * @module
 */
import type { Issue } from '../errors/index.js';
import type { Entity, EntityColumn, Relationship } from '../schema/index.js';
import { quoteName } from '../schema/issues.js';
import { GetEntityInputSchema } from '../schema/get-entity.js';
import { check } from '../schema/issues.js';
import { planRead } from '../query/plan.js';
import { compilePattern, startPatternTally } from '../json-schema/pattern.js';
import { computedKind } from './columns.js';
import { compileExpression, RESULT_TYPES } from './expression.js';

/**
 * Problems an entity has on its own: formulas that do not type-check or give another type than
 * their column's, checks that are not bool, validation rules that do not fit the column, and cycles
 * among its formulas. @internal
 */
export function entityIssues(entity: Entity): Issue[] {
  const issues: Issue[] = [];
  const keys = new Set(entity.primary_key);
  const stored = entity.columns.filter((c) => computedKind(c) === undefined);
  entity.columns.forEach((column, index) => {
    const path = `columns[${index}]`;
    const kinds = (['formula', 'lookup', 'rollup'] as const).filter((k) => column[k] !== undefined);
    if (kinds.length > 1)
      issues.push({
        code: 'invalid',
        path,
        message: `column ${quoteName(column.name)} is ${kinds.join(' and ')}; a column is computed one way at most`,
      });
    const kind = kinds[0];
    if (kind !== undefined) {
      if (keys.has(column.name))
        issues.push({
          code: 'invalid',
          path,
          message: `column ${quoteName(column.name)} is computed (${kind}); a primary-key column must be stored`,
        });
      for (const rule of RULE_FIELDS)
        if (column[rule] !== undefined)
          issues.push({
            code: 'invalid',
            path: `${path}.${rule}`,
            message: `column ${quoteName(column.name)} is computed (${kind}); validation rules apply to stored columns`,
          });
    }
    if (column.formula !== undefined) {
      const compiled = compileExpression(
        column.formula,
        entity.columns,
        RESULT_TYPES[column.type],
        `${path}.formula`,
        column.name,
      );
      if (!compiled.ok) issues.push(...compiled.issues);
    }
    issues.push(...ruleIssues(column, path));
  });
  (entity.checks ?? []).forEach((rule, i) => {
    const compiled = compileExpression(rule.expression, stored, ['bool'], `checks[${i}].expression`);
    if (!compiled.ok && compiled.issues[0]?.code === 'unknown_column') {
      const computed = entity.columns.find((c) => computedKind(c) && rule.expression.includes(c.name));
      if (computed)
        compiled.issues[0].message += `; checks read stored columns only, and ${quoteName(computed.name)} is computed`;
    }
    if (!compiled.ok) issues.push(...compiled.issues);
  });
  if (issues.length === 0) issues.push(...formulaCycles(entity));
  return issues;
}

const RULE_FIELDS = ['required', 'enum', 'min_length', 'max_length', 'pattern', 'format'] as const;

function ruleIssues(column: EntityColumn, path: string): Issue[] {
  const issues: Issue[] = [];
  const text = column.type === 'STRING';
  const bad = (field: string, message: string) =>
    issues.push({
      code: 'invalid',
      path: `${path}.${field}`,
      message: `column ${quoteName(column.name)} ${message}`,
    });
  for (const field of ['min_length', 'max_length', 'pattern', 'format'] as const)
    if (column[field] !== undefined && !text)
      bad(field, `is ${column.type}; ${field} applies to STRING columns`);
  if (
    column.min_length !== undefined &&
    column.max_length !== undefined &&
    column.min_length > column.max_length
  )
    bad('min_length', `has min_length ${column.min_length} above max_length ${column.max_length}`);
  if (column.enum !== undefined) {
    const want = column.type === 'NUMBER' ? 'number' : 'string';
    if (column.type === 'BOOLEAN') bad('enum', 'is BOOLEAN; enum applies to other columns');
    else
      column.enum.forEach((value, i) => {
        if (typeof value !== want)
          issues.push({
            code: 'invalid',
            path: `${path}.enum[${i}]`,
            message: `column ${quoteName(column.name)} is ${column.type}; enum value ${JSON.stringify(value)} is not a ${want}`,
          });
      });
  }
  if (column.pattern !== undefined && text) {
    startPatternTally();
    const compiled = compilePattern(column.pattern);
    if (!compiled.ok) bad('pattern', `pattern ${quoteName(column.pattern)} ${compiled.message}`);
  }
  return issues;
}

/** Cycles among an entity's formulas (a formula reading a formula that reads it back). */
function formulaCycles(entity: Entity): Issue[] {
  const graph = new Map<string, string[]>();
  for (const column of entity.columns)
    if (column.formula !== undefined) {
      const compiled = compileExpression(
        column.formula,
        entity.columns,
        RESULT_TYPES[column.type],
        '',
        column.name,
      );
      graph.set(
        `${entity.name}.${column.name}`,
        compiled.ok ? compiled.expression.reads.map((r) => `${entity.name}.${r}`) : [],
      );
    }
  const cycle = findCycle(graph);
  return cycle ? [cycleIssue(entity, cycle)] : [];
}

/**
 * Problems of an entity's lookups and rollups against the stored relationships and entities
 * (`entities` by name, this entity's new definition among them), and cycles through them. @internal
 */
export function relatedIssues(
  entity: Entity,
  entities: ReadonlyMap<string, Entity>,
  relationships: readonly Relationship[],
): Issue[] {
  const issues: Issue[] = [];
  const byName = new Map(relationships.map((r) => [r.name, r]));
  entity.columns.forEach((column, index) => {
    const path = `columns[${index}]`;
    const spec = column.lookup ?? column.rollup;
    if (!spec) return;
    const at = column.lookup ? `${path}.lookup` : `${path}.rollup`;
    const rel = byName.get(spec.relationship);
    if (!rel) {
      issues.push({
        code: 'unknown_relationship',
        path: `${at}.relationship`,
        message: `column ${quoteName(column.name)} names relationship ${quoteName(spec.relationship)}, which does not exist`,
      });
      return;
    }
    const lookup = column.lookup !== undefined;
    const own = lookup ? rel.source_entity : rel.target_entity;
    const otherName = lookup ? rel.target_entity : rel.source_entity;
    if (own !== entity.name) {
      issues.push({
        code: 'invalid',
        path: `${at}.relationship`,
        message: lookup
          ? `lookup ${quoteName(column.name)} needs a relationship from ${quoteName(entity.name)}; ${quoteName(rel.name)} goes from ${quoteName(rel.source_entity)} to ${quoteName(rel.target_entity)}`
          : `rollup ${quoteName(column.name)} needs a relationship to ${quoteName(entity.name)}; ${quoteName(rel.name)} goes from ${quoteName(rel.source_entity)} to ${quoteName(rel.target_entity)}`,
      });
      return;
    }
    if (otherName === entity.name) {
      issues.push({
        code: 'invalid',
        path: `${at}.relationship`,
        message: `column ${quoteName(column.name)} goes through ${quoteName(rel.name)}, which joins ${quoteName(entity.name)} to itself; lookups and rollups join two entities`,
      });
      return;
    }
    const other = entities.get(otherName);
    if (!other) {
      issues.push({
        code: 'unknown_entity',
        path: `${at}.relationship`,
        message: `relationship ${quoteName(rel.name)} names entity ${quoteName(otherName)}, which does not exist`,
      });
      return;
    }
    const fn = column.rollup?.function;
    const name = spec.column;
    const source = name === undefined ? undefined : other.columns.find((c) => c.name === name);
    if (name !== undefined && !source) {
      issues.push({
        code: 'unknown_column',
        path: `${at}.column`,
        message: `column ${quoteName(column.name)} reads ${quoteName(name)}, which is not a column of entity ${quoteName(other.name)} (columns: ${other.columns.map((c) => c.name).join(', ')})`,
      });
      return;
    }
    const want = !source
      ? fn === 'count'
        ? 'NUMBER'
        : undefined
      : fn === 'count' || fn === 'sum' || fn === 'avg'
        ? 'NUMBER'
        : source.type;
    if (!source && fn !== 'count')
      issues.push({
        code: 'invalid',
        path: `${at}.column`,
        message: `rollup ${quoteName(column.name)} computes ${fn ?? 'a lookup'} and needs a column of ${quoteName(other.name)}`,
      });
    else if ((fn === 'sum' || fn === 'avg') && source?.type !== 'NUMBER')
      issues.push({
        code: 'invalid_type',
        path: `${at}.column`,
        message: `rollup ${quoteName(column.name)} computes ${fn} of ${quoteName(other.name + '.' + source!.name)}, which is ${source!.type}, not NUMBER`,
      });
    else if (want !== undefined && want !== column.type)
      issues.push({
        code: 'invalid_type',
        path: `${path}.type`,
        message: `column ${quoteName(column.name)} is ${column.type}, but its ${lookup ? 'lookup' : `rollup (${fn})`} gives ${want}`,
      });
    if (column.rollup?.filters) {
      const input = check(GetEntityInputSchema, {
        entity_name: other.name,
        operation: { filters: column.rollup.filters },
      });
      const planned = input.ok
        ? planRead(other.name, other.columns, input.value, { maxPageSize: 1, defaultPageSize: 1 })
        : { ok: false as const, errors: input.issues.map((i) => `${i.path}: ${i.message}`) };
      if (!planned.ok)
        for (const error of planned.errors)
          issues.push({
            code: 'invalid',
            path: `${at}.filters`,
            message: `rollup ${quoteName(column.name)}: ${error.replace(/^operation\./, '')}`,
          });
    }
  });
  if (issues.length === 0) {
    const cycle = findCycle(dependencyGraph(entities, byName));
    if (cycle) issues.push(cycleIssue(entity, cycle));
  }
  return issues;
}

/** What each computed column (`entity.column`) reads, across every entity. @internal */
export function dependencyGraph(
  entities: ReadonlyMap<string, Entity>,
  relationships: ReadonlyMap<string, Relationship>,
): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const entity of entities.values())
    for (const column of entity.columns) {
      const node = `${entity.name}.${column.name}`;
      if (column.formula !== undefined) {
        const compiled = compileExpression(
          column.formula,
          entity.columns,
          RESULT_TYPES[column.type],
          '',
          column.name,
        );
        graph.set(node, compiled.ok ? compiled.expression.reads.map((r) => `${entity.name}.${r}`) : []);
      } else if (column.lookup) {
        const rel = relationships.get(column.lookup.relationship);
        graph.set(node, rel ? [`${rel.target_entity}.${column.lookup.column}`] : []);
      } else if (column.rollup) {
        const rel = relationships.get(column.rollup.relationship);
        const reads = [column.rollup.column, ...(column.rollup.filters ?? []).map((f) => f.column)];
        graph.set(
          node,
          rel ? reads.flatMap((r) => (r === undefined ? [] : [`${rel.source_entity}.${r}`])) : [],
        );
      }
    }
  return graph;
}

/** A cycle of the graph, as the nodes on it (the first repeated at the end), or undefined. */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 1 | 2>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    const seen = state.get(node);
    if (seen === 2) return undefined;
    if (seen === 1) return [...path.slice(path.indexOf(node)), node];
    state.set(node, 1);
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    state.set(node, 2);
    return undefined;
  };
  for (const node of graph.keys()) {
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

function cycleIssue(entity: Entity, cycle: readonly string[]): Issue {
  const first = cycle[0]!.startsWith(`${entity.name}.`) ? cycle[0]!.slice(entity.name.length + 1) : undefined;
  const index = entity.columns.findIndex((c) => c.name === first);
  return {
    code: 'cycle',
    path: index >= 0 ? `columns[${index}]` : 'columns',
    message: `computed columns read each other in a cycle: ${cycle.join(' → ')}`,
  };
}
