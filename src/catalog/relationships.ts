import type { Issue } from '../errors/index.js';
import type { Entity, Relationship } from '../schema/index.js';

/**
 * Problems of a relationship against its two entities: every named column must exist, and paired
 * columns must have the same type. @internal
 */
export function relationshipIssues(rel: Relationship, source: Entity, target: Entity): Issue[] {
  const issues: Issue[] = [];
  const { source_columns, target_columns } = rel.foreign_key_config;
  const sides = [
    ['source_columns', source, source_columns],
    ['target_columns', target, target_columns],
  ] as const;
  for (const [side, entity, columns] of sides) {
    columns.forEach((column, i) => {
      if (typeOf(entity, column)) return;
      issues.push({
        code: 'unknown_column',
        path: `foreign_key_config.${side}[${i}]`,
        message: `"${column}" is not a column of entity "${entity.name}" (columns: ${entity.columns.map((c) => c.name).join(', ')})`,
      });
    });
  }
  if (issues.length > 0) return issues;
  source_columns.forEach((column, i) => {
    const targetColumn = target_columns[i]!;
    const a = typeOf(source, column);
    const b = typeOf(target, targetColumn);
    if (a !== b) {
      issues.push({
        code: 'incompatible_types',
        path: `foreign_key_config.target_columns[${i}]`,
        message: `"${source.name}.${column}" is ${a} but "${target.name}.${targetColumn}" is ${b}; paired columns must have the same type`,
      });
    }
  });
  return issues;
}

/**
 * Problems of replacing `previous` with `entity`: a relationship may not lose a column it uses, nor
 * see its type change. @internal
 */
export function redefinitionIssues(
  entity: Entity,
  previous: Entity,
  relationships: readonly Relationship[],
): Issue[] {
  const issues: Issue[] = [];
  for (const rel of relationships) {
    const sides = [
      ['source_columns', rel.source_entity, rel.foreign_key_config.source_columns],
      ['target_columns', rel.target_entity, rel.foreign_key_config.target_columns],
    ] as const;
    for (const [side, entityName, columns] of sides) {
      if (entityName !== entity.name) continue;
      for (const column of columns) {
        const now = typeOf(entity, column);
        const before = typeOf(previous, column);
        if (now && (!before || now === before)) continue;
        issues.push({
          code: 'relationship_conflict',
          path: 'columns',
          message: `relationship "${rel.name}" uses column "${column}" (${side}), which the new definition ${now ? `changes from ${before} to ${now}` : 'removes'}`,
        });
      }
    }
  }
  return issues;
}

function typeOf(entity: Entity, column: string): string | undefined {
  return entity.columns.find((c) => c.name === column)?.type;
}
