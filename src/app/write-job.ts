/**
 * Forms whose job writes one row of an entity: the items as the entity's columns shape them (key
 * columns required, number rules), the row the screen's address names (to show it in the form),
 * and the write itself, whose problems come back attached to the items.
 * @module
 */
import { WriteRejectedError, isStepwireError, type Issue } from '../errors/index.js';
import type { Entity, FormItem, WriteJob } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { keyPath } from '../json-schema/describe.js';
import { itemProperty } from './form.js';
import type { AppHost } from './host.js';
import { fillQueryValue } from './redirect.js';
import type { ScreenQuery } from './types.js';

/**
 * The items of a write form with the entity's column rules added: an item of a key column that the
 * job's `key` does not fill is required, and a number item keeps its column's `min`, `max` and
 * `step` (the stricter bound wins). @internal
 */
export function writeItems(items: readonly FormItem[], entity: Entity, job: WriteJob): FormItem[] {
  return items.map((item) => {
    const property = itemProperty(item);
    const column = entity.columns.find((c) => c.name === property);
    const keyed = entity.primary_key.includes(property) && !Object.hasOwn(job.key ?? {}, property);
    const rules = column?.number;
    const out: FormItem = { ...item, required: (item.required ?? false) || keyed };
    if (rules && item.type === 'number') {
      const own = item.number_config ?? {};
      const config: NonNullable<FormItem['number_config']> = {};
      const min = stricter(own.min, rules.min, Math.max);
      const max = stricter(own.max, rules.max, Math.min);
      const step = own.step ?? rules.step;
      if (min !== undefined) config.min = min;
      if (max !== undefined) config.max = max;
      if (step !== undefined) config.step = step;
      out.number_config = config;
    }
    return out;
  });
}

/** The key the job's `key` names with the screen's query, or the query parameter that is missing. */
function keyOf(job: WriteJob, query: ScreenQuery): { key: Record<string, string> } | { missing: string } {
  const key: Record<string, string> = {};
  for (const [column, template] of Object.entries(job.key ?? {})) {
    const filled = fillQueryValue(template, query);
    if ('missing' in filled) return filled;
    setOwn(key, column, filled.value);
  }
  return { key };
}

/**
 * The values of the row the job's `key` names, as form text (item property -> value), or why it
 * cannot be shown. Nothing to show (`values: null`) for a job without `key` or an `append`. @internal
 */
export async function prefill(
  host: AppHost,
  job: WriteJob,
  query: ScreenQuery,
): Promise<{ values: Record<string, string> | null; error: string | null }> {
  if (!job.key || job.write_mode === 'append') return { values: null, error: null };
  const found = keyOf(job, query);
  if ('missing' in found)
    return {
      values: null,
      error: `This form needs "${found.missing}" in the address of the screen, and it is not there.`,
    };
  const entity = await host.catalog.getDefinition(job.entity_name);
  const filters = Object.entries(found.key).map(([column, value]) => {
    const type = entity.columns.find((c) => c.name === column)?.type;
    const value_type = type === 'NUMBER' || type === 'BOOLEAN' ? type : ('STRING' as const);
    return { column, operator: 'EQUALS' as const, value_type, value };
  });
  const read = await host.catalog.getEntity({
    entity_name: entity.name,
    operation: { filters },
    page_size: 1,
  });
  const shown = Object.entries(found.key)
    .map(([column, value]) => `${column} ${value}`)
    .join(', ');
  const none = `There is no "${entity.name}" row with ${shown}.`;
  if (read.body.error?.is_error) {
    // A key from the address that its column cannot hold (`id=abc` for a number) names no row; any
    // other failure (the sheet cannot be read) is told in a plain sentence, its details kept off the page.
    const errors = read.body.error.errors ?? [];
    const badKey = errors.length > 0 && errors.every((error) => error.startsWith('operation.filters'));
    return { values: null, error: badKey ? none : `The "${entity.name}" row could not be read.` };
  }
  const row = read.body.table.rows?.[0];
  if (!row) return { values: null, error: none };
  const values: Record<string, string> = {};
  (read.body.table.columns ?? []).forEach((column, i) => {
    const cell = row[i];
    setOwn(values, column.name, cell === null || cell === undefined ? '' : String(cell));
  });
  return { values, error: null };
}

/** What a write form's submission did. @internal */
export type WriteOutcome =
  | { ok: true; output: Record<string, unknown>; written: number }
  | { ok: false; reason: 'invalid' | 'failed'; issues: Issue[] };

/**
 * Writes the submitted row: the items' values, plus the key the job's `key` names (a `delete`
 * writes the key only). Problems of a column come back with the item's property as `path`;
 * problems of the row (a missing key, a row still referenced) with `path` `""`. @internal
 */
export async function submitWrite(
  host: AppHost,
  job: WriteJob,
  input: Record<string, unknown>,
  query: ScreenQuery,
): Promise<WriteOutcome> {
  const found = keyOf(job, query);
  if ('missing' in found)
    return {
      ok: false,
      reason: 'invalid',
      issues: [
        {
          code: 'missing_query_param',
          path: '',
          message: `This form needs "${found.missing}" in the address of the screen, and it is not there.`,
        },
      ],
    };
  const row: Record<string, unknown> = {};
  for (const [name, value] of [...Object.entries(input), ...Object.entries(found.key)])
    setOwn(row, name, value);
  try {
    const result = await host.catalog.write([{ entity: job.entity_name, rows: [row], mode: job.write_mode }]);
    return {
      ok: true,
      output: { ...row, written: result.written[job.entity_name] ?? 0 },
      written: result.written[job.entity_name] ?? 0,
    };
  } catch (error) {
    if (error instanceof WriteRejectedError)
      return { ok: false, reason: 'invalid', issues: error.issues.map((i) => itemIssue(job, i)) };
    if (isStepwireError(error))
      return {
        ok: false,
        reason: 'failed',
        issues: [{ code: error.code, path: '', message: error.message }],
      };
    throw error;
  }
}

/**
 * A catalog issue of the written row as a form issue: `customers[0].city` is the item `city`, at
 * its property's path as a form issue has it (`city`, `["Unit price (EUR.)"]`).
 */
function itemIssue(job: WriteJob, issue: Issue): Issue {
  const prefix = `${job.entity_name}[0].`;
  if (!issue.path.startsWith(prefix)) return { ...issue, path: '' };
  const column = issue.path.slice(prefix.length);
  // "row 1 of "customers": column "city" must be ..." reads as "city must be ..." next to the item.
  // The catalog quotes names as they are, so the prefix is matched as text, not by a pattern.
  const subject = `row 1 of "${job.entity_name}": column "${column}" `;
  const message = issue.message.startsWith(subject)
    ? `${column} ${issue.message.slice(subject.length)}`
    : issue.message;
  return { ...issue, path: keyPath('', column), message };
}

function stricter(
  a: number | undefined,
  b: number | undefined,
  pick: (x: number, y: number) => number,
): number | undefined {
  return a === undefined ? b : b === undefined ? a : pick(a, b);
}
