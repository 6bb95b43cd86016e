/**
 * The access policy applied to a planned write: hidden and read-only columns stay as
 * they are, a row the principal does not see is missing to it, and every row written must be one it
 * may write, before and after.
 * @module
 */
import { ForbiddenError, type Issue } from '../errors/index.js';
import type { EntityAccess } from '../access/grants.js';
import { rowsMatchingRules } from '../query/execute.js';
import { appendRows, createTable } from '../query/entity-table.js';
import { quoteName } from '../schema/issues.js';
import { duplicate, keyColumns, missing, type WritePlan } from './write-plan.js';

/** Rules are planned as reads of one row: the page size only bounds what a read would answer. */
const RULE_LIMITS = { maxPageSize: 1, defaultPageSize: 1 };

/**
 * Applies `access` to `plan`, in place: updates and deletes of rows the principal does not see are
 * dropped for a `missing_key` issue (an upsert's for a `duplicate_key` one), as a missing row's are.
 * @throws {@link ForbiddenError} naming the column when a hidden or read-only column would change,
 *   or the row when a written row would be outside the rows the principal may write.
 * @internal
 */
export function applyWriteAccess(plan: WritePlan, access: EntityAccess, issues: Issue[]): void {
  const { entity } = plan;
  const name = entity.name;
  const rules = access.rows;
  if (rules === 'all' && access.hidden.size === 0 && access.readOnly.size === 0) return;
  if (plan.mode === 'replace')
    throw new ForbiddenError(
      `write_mode "replace" of entity ${quoteName(name)} would replace rows or columns you may not see or change; write by key instead`,
      'entity.write',
    );
  // Before, and before any column is looked at: a row it does not see is no row to it, so what it
  // is told never depends on the cells of such a row (a read-only column's value, say).
  if (rules !== 'all') {
    const seen = rowsMatchingRules(name, plan.loaded.table, rules, RULE_LIMITS, [
      ...plan.updates.map((u) => u.index),
      ...plan.deletes.map((d) => d.index),
    ]);
    const columns = keyColumns(entity);
    plan.updates = plan.updates.filter((u) => {
      if (seen.has(u.index)) return true;
      issues.push(
        plan.mode === 'upsert'
          ? duplicate(entity, u.input, columns, u.row, 'a row already stored')
          : missing(entity, u.input, columns, u.row),
      );
      return false;
    });
    plan.deletes = plan.deletes.filter((d) => {
      if (seen.has(d.index)) return true;
      issues.push(missing(entity, d.input, columns, d.row));
      return false;
    });
  }
  const fixed = entity.columns.flatMap((column, c) =>
    access.hidden.has(column.name) || access.readOnly.has(column.name) ? [c] : [],
  );
  const refuse = (c: number, row: number) =>
    new ForbiddenError(
      `row ${row + 1} of ${quoteName(name)}: column ${quoteName(entity.columns[c]!.name)} is ${access.hidden.has(entity.columns[c]!.name) ? 'hidden from you' : 'read-only for you'}`,
      'entity.write',
    );
  // New rows leave the columns it may not set empty.
  plan.rows.forEach((row, k) => {
    for (const c of fixed) if (row[c] !== null && row[c] !== undefined) throw refuse(c, plan.inputs[k]!);
  });
  for (const update of plan.updates)
    for (const c of fixed)
      if (
        update.given[c] &&
        (access.hidden.has(entity.columns[c]!.name) || update.row[c] !== update.before[c])
      )
        throw refuse(c, update.input);
  if (rules === 'all') return;
  // After: every row written is one it may write.
  const after = [...plan.rows, ...plan.updates.map((u) => u.row)];
  const inputs = [...plan.inputs, ...plan.updates.map((u) => u.input)];
  if (after.length === 0) return;
  const table = appendRows(createTable(entity.columns, 0), after);
  const allowed = rowsMatchingRules(
    name,
    table,
    rules,
    RULE_LIMITS,
    after.map((_, i) => i),
  );
  const outside = after.findIndex((_, i) => !allowed.has(i));
  if (outside >= 0)
    throw new ForbiddenError(
      `row ${inputs[outside]! + 1} of ${quoteName(name)} would not be a row you may write (the row rules of your roles)`,
      'entity.write',
    );
}
