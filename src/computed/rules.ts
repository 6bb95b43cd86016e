/**
 * Validation rules of written rows: the column rules (`required`, `enum`, `min_length`,
 * `max_length`, `pattern`, `format`) and the entity's `checks`. Every broken rule is one issue naming
 * the row and the column; the write is refused whole when there is one.
 * @module
 */
import type { Issue } from '../errors/index.js';
import { compilePattern, startPatternTally, type Pattern } from '../json-schema/pattern.js';
import type { Entity, EntityColumn } from '../schema/index.js';
import { quoteName } from '../schema/issues.js';
import { compileExpression, type RowExpression } from './expression.js';

/** The rules of one entity's rows, compiled once per definition. @internal */
export interface RowRules {
  /**
   * Adds an issue to `issues` for every rule `row` (values in the entity's stored column order)
   * breaks; `given` (a patch) limits the column rules to the columns it gives. `i` is the input row.
   */
  check(row: readonly unknown[], given: readonly boolean[] | undefined, i: number, issues: Issue[]): void;
}

type ColumnRule = (value: unknown) => string | undefined;

const KEPT = new WeakMap<Entity, RowRules | null>();

/** The rules of `entity` (a stored entity: the columns a write gives), or undefined when it has none. @internal */
export function rowRules(entity: Entity): RowRules | undefined {
  let rules = KEPT.get(entity);
  if (rules === undefined) {
    rules = compileRules(entity);
    KEPT.set(entity, rules);
  }
  return rules ?? undefined;
}

function compileRules(entity: Entity): RowRules | null {
  const columns = entity.columns;
  const perColumn = columns.map((column) => columnRules(column));
  const checks = (entity.checks ?? []).flatMap((rule, k) => {
    const compiled = compileExpression(rule.expression, columns, ['bool'], `checks[${k}].expression`);
    return compiled.ok ? [{ rule, expression: compiled.expression }] : [];
  });
  if (checks.length === 0 && perColumn.every((r) => r.length === 0)) return null;
  const at = new Map(columns.map((c, i) => [c.name, i]));
  const values: Record<string, unknown> = {};
  return {
    check(row, given, i, issues) {
      for (let c = 0; c < columns.length; c++) {
        const rules = perColumn[c]!;
        if (rules.length === 0 || (given && !given[c])) continue;
        for (const rule of rules) {
          const broken = rule(row[c]);
          if (broken === undefined) continue;
          const column = columns[c]!;
          issues.push({
            code: 'rule_broken',
            path: `${entity.name}[${i}].${column.name}`,
            message: `row ${i + 1} of ${quoteName(entity.name)}: column ${quoteName(column.name)} ${broken}`,
          });
        }
      }
      for (const { rule, expression } of checks) {
        for (const name of expression.reads) values[name] = row[at.get(name)!];
        const result = evaluateCheck(expression, values);
        if (result === undefined) continue;
        issues.push({
          code: 'check_failed',
          path: `${entity.name}[${i}]${expression.reads.length === 1 ? `.${expression.reads[0]}` : ''}`,
          message: `row ${i + 1} of ${quoteName(entity.name)} breaks a check on ${expression.reads.length > 0 ? `column${expression.reads.length === 1 ? '' : 's'} ${expression.reads.map(quoteName).join(', ')}` : 'the row'}: ${rule.message}${result === '' ? '' : ` (${result})`}`,
        });
      }
    },
  };
}

/** Undefined when the check holds (or needs an empty cell); else why not ('' when it is false). */
function evaluateCheck(expression: RowExpression, values: Record<string, unknown>): string | undefined {
  const result = expression.evaluate(values);
  if (result === undefined) return undefined;
  if ('error' in result) return `it could not be evaluated: ${result.error}`;
  return result.value === true ? undefined : '';
}

/** The rules of one column, each giving what is wrong with a value or undefined. */
function columnRules(column: EntityColumn): ColumnRule[] {
  const rules: ColumnRule[] = [];
  if (column.required) rules.push((v) => (v === null || v === undefined ? 'is required' : undefined));
  const present =
    (check: (v: unknown) => string | undefined): ColumnRule =>
    (v) =>
      v === null || v === undefined ? undefined : check(v);
  if (column.enum) {
    const allowed = new Set<unknown>(column.enum);
    const shown = column.enum
      .slice(0, 20)
      .map((v) => JSON.stringify(v))
      .join(', ');
    rules.push(
      present((v) => (allowed.has(v) ? undefined : `must be one of ${shown}, got ${JSON.stringify(v)}`)),
    );
  }
  const { min_length: min, max_length: max } = column;
  if (min !== undefined)
    rules.push(
      present((v) =>
        typeof v === 'string' && length(v) < min
          ? `must be at least ${min} characters long, got ${length(v)}`
          : undefined,
      ),
    );
  if (max !== undefined)
    rules.push(
      present((v) =>
        typeof v === 'string' && length(v) > max
          ? `must be at most ${max} characters long, got ${length(v)}`
          : undefined,
      ),
    );
  if (column.pattern !== undefined) {
    startPatternTally();
    const compiled = compilePattern(column.pattern);
    const pattern: Pattern | undefined = compiled.ok ? compiled.pattern : undefined;
    const source = column.pattern;
    rules.push(
      present((v) =>
        typeof v === 'string' && pattern && !pattern.test(v)
          ? `must match pattern ${quoteName(source)}`
          : undefined,
      ),
    );
  }
  if (column.format === 'email')
    rules.push(
      present((v) =>
        typeof v === 'string' && !isEmail(v) ? `must be an email address, got ${show(v)}` : undefined,
      ),
    );
  if (column.format === 'url')
    rules.push(
      present((v) =>
        typeof v === 'string' && !isUrl(v) ? `must be an http or https URL, got ${show(v)}` : undefined,
      ),
    );
  return rules;
}

/** Length in characters (code points), as JSON Schema counts it. */
function length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xd800 || code > 0xdbff || i + 1 === text.length) n++;
    else {
      const next = text.charCodeAt(i + 1);
      n++;
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return n;
}

function show(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/** `local@domain.tld`: one `@`, no spaces, a dot inside the domain. Checked without a regular expression. */
export function isEmail(text: string): boolean {
  const at = text.indexOf('@');
  if (at <= 0 || at !== text.lastIndexOf('@') || text.length > 320) return false;
  if (/\s/.test(text)) return false;
  const domain = text.slice(at + 1);
  const dot = domain.indexOf('.');
  return dot > 0 && !domain.endsWith('.') && !domain.includes('..');
}

/** An absolute `http:` or `https:` URL with a host. */
export function isUrl(text: string): boolean {
  if (/\s/.test(text)) return false;
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
