import { formatIssue, type Issue } from '../errors/index.js';
import type { FormItem } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { brokenNumberRule } from '../schema/number-rules.js';
import { keyPath } from '../json-schema/describe.js';

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TRUE_VALUES = new Set(['on', 'true', '1', 'yes']);
const FALSE_VALUES = new Set(['', 'off', 'false', '0', 'no']);

/** The workflow input built from submitted form values, and what was wrong with them. @internal */
export interface CoercedForm {
  /** The input object: one own property per item that has a value. */
  input: Record<string, unknown>;
  /** One issue per bad item; `path` is the item's input property as a path (`amount`, `["No. of items"]`). */
  issues: Issue[];
}

/**
 * Turns submitted strings into typed input values, item by item: `number` parses (and keeps to
 * `number_config`), `boolean` is a checkbox (`on`/`true`; absent is false), `date` is `YYYY-MM-DD`,
 * text is kept as typed. An empty optional item is left out; an empty required item is an issue.
 * @internal
 */
export function coerceForm(
  items: readonly FormItem[],
  values: Readonly<Record<string, string>>,
): CoercedForm {
  const input: Record<string, unknown> = {};
  const issues: Issue[] = [];
  for (const item of items) {
    const property = itemProperty(item);
    const raw = Object.hasOwn(values, property) ? String(values[property]) : undefined;
    const result = coerceItem(item, raw);
    if ('message' in result)
      issues.push({ code: result.code, path: keyPath('', property), message: result.message });
    else if (result.value !== undefined) setOwn(input, property, result.value);
  }
  return { input, issues };
}

type ItemResult = { value: unknown } | { code: string; message: string };

function coerceItem(item: FormItem, raw: string | undefined): ItemResult {
  const label = item.label;
  if (item.type === 'boolean') {
    const text = (raw ?? '').trim().toLowerCase();
    if (TRUE_VALUES.has(text)) return { value: true };
    if (FALSE_VALUES.has(text)) return { value: false };
    return { code: 'invalid_boolean', message: `${label} must be checked or unchecked` };
  }
  const text = item.type === 'text' || item.type === 'string' ? (raw ?? '') : (raw ?? '').trim();
  if (text.trim() === '') {
    return item.required ? { code: 'required', message: `${label} is required` } : { value: undefined };
  }
  if (item.type === 'number') return coerceNumber(item, text);
  if (item.type === 'date') {
    const match = DATE.exec(text);
    if (!match || !isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3]))) {
      return { code: 'invalid_date', message: `${label} must be a date written YYYY-MM-DD, got "${text}"` };
    }
    return { value: text };
  }
  return { value: text };
}

function coerceNumber(item: FormItem, text: string): ItemResult {
  const label = item.label;
  const value = NUMBER.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value))
    return { code: 'invalid_number', message: `${label} must be a number, got "${text}"` };
  const broken = brokenNumberRule(value, item.number_config ?? {});
  if (broken) return { code: broken.code, message: `${label} ${broken.rule}` };
  return { value };
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return day <= days;
}

/**
 * Splits workflow input issues into those of an item (by its property's path, e.g. `amount`,
 * `amount.x` or `["No. of items"]`) and those of the whole form. @internal
 */
export function assignIssues(
  items: readonly FormItem[],
  issues: readonly Issue[],
): { byItem: Map<string, string>; form: string[] } {
  const byItem = new Map<string, string>();
  const form: string[] = [];
  const paths = items.map((item) => ({
    property: itemProperty(item),
    label: item.label,
    path: keyPath('', itemProperty(item)),
  }));
  for (const issue of issues) {
    const owner = paths.find(
      (p) =>
        issue.path === p.path || issue.path.startsWith(`${p.path}.`) || issue.path.startsWith(`${p.path}[`),
    );
    // Input messages name the property as a path (`customer_id must be ...`, `["No. of items"] must be ...`),
    // or as written (`No. of items is required`); next to the item, its label reads better.
    const subject = owner && [owner.path, owner.property].find((s) => issue.message.startsWith(`${s} `));
    const message =
      owner && subject !== undefined ? `${owner.label}${issue.message.slice(subject.length)}` : issue.message;
    if (owner && !byItem.has(owner.property)) byItem.set(owner.property, message);
    else if (!owner) form.push(formatIssue(issue));
  }
  return { byItem, form };
}

/** The workflow input property a form item fills: its `name`, else its `label`. @internal */
export function itemProperty(item: { name?: string | undefined; label: string }): string {
  return item.name ?? item.label;
}
