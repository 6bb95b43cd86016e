import { formatIssue, type Issue } from '../errors/index.js';
import type { FormItem } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { brokenNumberRule } from '../schema/number-rules.js';
import { keyPath } from '../json-schema/describe.js';
import type { FormRules } from './types.js';

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TRUE_VALUES = new Set(['on', 'true', '1', 'yes']);
const FALSE_VALUES = new Set(['', 'off', 'false', '0', 'no']);

/**
 * A form item with what the form knows of its value beyond its config: the rules shown beside it
 * (from the column a form writes, or the workflow's input), the number rules shown (`shownNumber`,
 * when wider than those the item itself keeps), and whether a `select` or `ref` value is sent as
 * a number. @internal
 */
export type ShownItem = FormItem & {
  rules?: FormRules;
  shownNumber?: NonNullable<FormItem['number_config']>;
  numeric?: boolean;
};

/** No rules: what an item shows when neither a column nor an input schema gives any. @internal */
export const NO_RULES: FormRules = {
  minLength: null,
  maxLength: null,
  pattern: null,
  format: null,
  checks: [],
};

/** The workflow input built from submitted form values, and what was wrong with them. @internal */
export interface CoercedForm {
  /** The input object: one own property per item that has a value. */
  input: Record<string, unknown>;
  /** One issue per bad item; `path` is the item's input property as a path (`amount`, `["No. of items"]`). */
  issues: Issue[];
}

/**
 * Turns submitted strings into typed input values, item by item: `number` parses (and keeps to
 * `number_config`), `boolean` and `checkbox` are a box (`on`/`true`; absent is false), `date` is
 * `YYYY-MM-DD`, `select` one of its options' values, `ref` the value of a row (found in its entity
 * by the caller), text is kept as typed (a `textarea`'s line breaks as `\n`). An empty optional item
 * is left out; an empty required item is an issue.
 * @internal
 */
export function coerceForm(
  items: readonly ShownItem[],
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

function coerceItem(item: ShownItem, raw: string | undefined): ItemResult {
  const label = item.label;
  if (item.type === 'boolean' || item.type === 'checkbox') {
    const text = (raw ?? '').trim().toLowerCase();
    if (TRUE_VALUES.has(text)) return { value: true };
    if (FALSE_VALUES.has(text)) return { value: false };
    return { code: 'invalid_boolean', message: `${label} must be checked or unchecked` };
  }
  // A browser sends a textarea's line breaks as CR LF; the value keeps them as LF.
  const text =
    item.type === 'textarea'
      ? (raw ?? '').replace(/\r\n?/g, '\n')
      : item.type === 'text' || item.type === 'string' || item.type === 'select'
        ? (raw ?? '')
        : (raw ?? '').trim();
  if (text.trim() === '') {
    return item.required ? { code: 'required', message: `${label} is required` } : { value: undefined };
  }
  if (item.type === 'number') return coerceNumber(item, text);
  if (item.type === 'select') {
    if (!(item.options ?? []).some((option) => option.value === text))
      return { code: 'not_an_option', message: `${label} must be one of its choices` };
    return item.numeric ? { value: Number(text) } : { value: text };
  }
  if (item.type === 'ref') {
    // Whether a row holds the value is read afterwards; a number column cannot hold what is no number.
    if (!item.numeric) return { value: text };
    return NUMBER.test(text)
      ? { value: Number(text) }
      : { code: 'not_an_option', message: `${label} must be one of its choices` };
  }
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

/** What a form reads of one workflow input property's JSON Schema. */
interface InputProperty {
  type?: unknown;
  enum?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
  pattern?: unknown;
  format?: unknown;
  minimum?: unknown;
  maximum?: unknown;
}

/**
 * The items of a form that runs a workflow, with the rules of the input property each fills: a
 * required property (without a default) makes its item required; `minLength`, `maxLength`,
 * `pattern` and `format` (`email`, `uri`) are shown beside text items; `minimum` and `maximum`
 * beside number items; an `enum` of strings or numbers turns a text item into a select of its
 * values. The workflow checks its input itself: the item keeps only its own number rules. @internal
 */
export function inputItems(
  items: readonly FormItem[],
  schema: unknown,
  defaults: Readonly<Record<string, unknown>> = {},
): ShownItem[] {
  const object = isObject(schema) ? schema : {};
  const properties = isObject(object.properties) ? object.properties : {};
  const required = new Set(
    Array.isArray(object.required) ? object.required.filter((r) => typeof r === 'string') : [],
  );
  return items.map((item) => {
    const name = itemProperty(item);
    const declared = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (!isObject(declared)) return item;
    const property = declared as InputProperty;
    const out: ShownItem = { ...item };
    // A box is never empty (unchecked is false): it is not marked required.
    const box = item.type === 'boolean' || item.type === 'checkbox';
    if (required.has(name) && !Object.hasOwn(defaults, name) && !box) out.required = true;
    const text = item.type === 'text' || item.type === 'string' || item.type === 'textarea';
    if (text) {
      const format =
        property.format === 'email'
          ? 'email'
          : property.format === 'uri' || property.format === 'url'
            ? 'url'
            : null;
      out.rules = {
        minLength: count(property.minLength),
        maxLength: count(property.maxLength),
        pattern: typeof property.pattern === 'string' ? property.pattern : null,
        format,
        checks: [],
      };
    }
    const choices = Array.isArray(property.enum) ? property.enum : undefined;
    if (choices && item.type !== 'textarea' && text) {
      const kept = choices.filter(
        (v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)),
      );
      if (kept.length === choices.length && kept.length > 0) {
        out.type = 'select';
        out.options = [...new Set(kept.map(String))].map((value) => ({ value }));
        out.numeric = kept.every((v) => typeof v === 'number');
      }
    }
    if (item.type === 'select') {
      const types = ([] as unknown[]).concat(property.type ?? []);
      out.numeric = types.length > 0 && types.every((t) => t === 'number' || t === 'integer');
    }
    if (item.type === 'number') {
      const own = item.number_config ?? {};
      const shown: NonNullable<FormItem['number_config']> = { ...own };
      const min = finite(property.minimum);
      const max = finite(property.maximum);
      if (min !== undefined) shown.min = own.min === undefined ? min : Math.max(own.min, min);
      if (max !== undefined) shown.max = own.max === undefined ? max : Math.min(own.max, max);
      if (min !== undefined || max !== undefined) out.shownNumber = shown;
    }
    return out;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
