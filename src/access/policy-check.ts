/**
 * The checks of an access policy against the catalog: every entity a rule names exists, and every
 * column it names is one of that entity's.
 * @module
 */
import type { Issue } from '../errors/index.js';
import type { AccessPolicy } from '../schema/access.js';
import type { Entity } from '../schema/index.js';
import { listNames, quoteName } from '../schema/issues.js';

/** Every entity or column a rule of `policy` names that `entities` lack, each at its path. @internal */
export function policyIssues(policy: AccessPolicy, entities: readonly Entity[]): Issue[] {
  const byName = new Map(entities.map((e) => [e.name, e]));
  const issues: Issue[] = [];
  const entityOf = (name: string, path: string): Entity | undefined => {
    const entity = byName.get(name);
    if (!entity)
      issues.push({
        code: 'not_found',
        path,
        message: `unknown entity ${quoteName(name)}; entities: ${listNames([...byName.keys()]) || '(none)'}`,
      });
    return entity;
  };
  const column = (entity: Entity, name: string, path: string) => {
    if (!entity.columns.some((c) => c.name === name))
      issues.push({
        code: 'not_found',
        path,
        message: `unknown column ${quoteName(name)} of entity ${quoteName(entity.name)} (columns: ${listNames(entity.columns.map((c) => c.name))})`,
      });
  };
  (policy.rows ?? []).forEach((rule, r) => {
    const entity = entityOf(rule.entity, `rows[${r}].entity`);
    if (entity) rule.filters.forEach((f, i) => column(entity, f.column, `rows[${r}].filters[${i}].column`));
  });
  (policy.columns ?? []).forEach((rule, r) => {
    const entity = entityOf(rule.entity, `columns[${r}].entity`);
    if (!entity) return;
    rule.hidden?.forEach((name, i) => column(entity, name, `columns[${r}].hidden[${i}]`));
    rule.read_only?.forEach((name, i) => column(entity, name, `columns[${r}].read_only[${i}]`));
    for (const key of entity.primary_key)
      if (rule.hidden?.includes(key))
        issues.push({
          code: 'invalid',
          path: `columns[${r}].hidden`,
          message: `primary key column ${quoteName(key)} of entity ${quoteName(entity.name)} cannot be hidden: rows are written and found by it`,
        });
  });
  return issues;
}
