/**
 * Forms whose job writes one row of an entity: the items as the entity's columns shape them (key
 * columns required, number rules), the row the screen's address names (to show it in the form),
 * and the write itself, whose problems come back attached to the items.
 * @module
 */
import { WriteRejectedError, isStepwireError, type Issue } from '../errors/index.js';
import type { Entity, EntityColumn, FormItem, WriteJob } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { keyPath } from '../json-schema/describe.js';
import { compileExpression } from '../computed/expression.js';
import { itemProperty, type ShownItem } from './form.js';
import type { FormRules } from './types.js';
import type { AppHost } from './host.js';
import { fillQueryValue } from './redirect.js';
import type { ScreenQuery } from './types.js';

/**
 * The items of a write form with the entity's column rules added: an item of a key column that the
 * job's `key` does not fill, or of a `required` column, is required; a number item keeps its
 * column's `min`, `max` and `step` (the stricter bound wins); a text or number item of a column
 * with an `enum` becomes a select of its values; `min_length`, `max_length`, `pattern`, `format`
 * and the messages of the checks on the column alone are the item's rules. @internal
 */
export function writeItems(items: readonly FormItem[], entity: Entity, job: WriteJob): ShownItem[] {
  const checks = columnChecks(entity);
  return items.map((item) => {
    const property = itemProperty(item);
    const column = entity.columns.find((c) => c.name === property);
    const keyed = entity.primary_key.includes(property) && !Object.hasOwn(job.key ?? {}, property);
    const rules = column?.number;
    // A box is never empty: a required BOOLEAN column is kept by an unchecked box too.
    const box = item.type === 'boolean' || item.type === 'checkbox';
    const out: ShownItem = {
      ...item,
      required: (item.required ?? false) || keyed || (!box && column?.required === true),
    };
    if (column) {
      out.rules = columnRules(column, checks.get(column.name) ?? []);
      const numeric = column.type === 'NUMBER';
      if (item.type === 'select' || item.type === 'ref') out.numeric = numeric;
      if (column.enum && (item.type === 'text' || item.type === 'string' || item.type === 'number')) {
        out.type = 'select';
        out.options = [...new Set(column.enum.map(String))].map((value) => ({ value }));
        out.numeric = numeric;
        delete out.number_config;
      }
    }
    if (rules && out.type === 'number') {
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

/** The rules of a column a form item fills, as the form shows them. */
function columnRules(column: EntityColumn, checks: string[]): FormRules {
  return {
    minLength: column.min_length ?? null,
    maxLength: column.max_length ?? null,
    pattern: column.pattern ?? null,
    format: column.format ?? null,
    checks,
  };
}

/** The messages of the entity's checks that read one column, by that column. */
function columnChecks(entity: Entity): Map<string, string[]> {
  const out = new Map<string, string[]>();
  (entity.checks ?? []).forEach((rule, k) => {
    const compiled = compileExpression(rule.expression, entity.columns, ['bool'], `checks[${k}].expression`);
    if (!compiled.ok || compiled.expression.reads.length !== 1) return;
    const column = compiled.expression.reads[0]!;
    out.set(column, [...(out.get(column) ?? []), rule.message]);
  });
  return out;
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

/** A quoted name as the catalog writes it in a message (JSON). */
const QUOTED = String.raw`"(?:[^"\\]|\\.)*"`;
/** What the catalog says of a broken check, the check's own message captured. */
const CHECK_MESSAGE = new RegExp(
  String.raw`^row 1 of ${QUOTED} breaks a check on (?:the row|columns? ${QUOTED}(?:, ${QUOTED})*): ([\s\S]*)$`,
);

/**
 * A catalog issue of the written row as a form issue: `customers[0].city` is the item `city`, at
 * its property's path as a form issue has it (`city`, `["Unit price (EUR.)"]`).
 */
function itemIssue(job: WriteJob, issue: Issue): Issue {
  const prefix = `${job.entity_name}[0].`;
  // A broken check says its own message: next to the item of its column, or on the form when it reads several.
  const check = issue.code === 'check_failed' ? CHECK_MESSAGE.exec(issue.message)?.[1] : undefined;
  if (!issue.path.startsWith(prefix)) return { ...issue, path: '', message: check ?? issue.message };
  const column = issue.path.slice(prefix.length);
  if (check !== undefined) return { ...issue, path: keyPath('', column), message: check };
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
