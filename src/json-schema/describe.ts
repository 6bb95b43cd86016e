/**
 * Small pure helpers of the JSON Schema validator: data paths, value descriptions for messages,
 * JSON equality and code point counting. None of them is on the hot path of a valid value.
 * @module
 */

export { indexPath, keyPath } from '../schema/path.js';

/** The name a message uses for the value at `path`: its last property name, or `value` at the root. @internal */
export function subjectOf(path: string): string {
  if (path === '') return 'value';
  let lastDot = -1;
  let inQuote = false;
  for (let i = 0; i < path.length; i += 1) {
    const ch = path[i];
    if (inQuote) {
      if (ch === '\\') i += 1;
      else if (ch === '"') inQuote = false;
    } else if (ch === '"') inQuote = true;
    else if (ch === '.') lastDot = i;
  }
  return lastDot === -1 ? path : path.slice(lastDot + 1);
}

/** Describes a value for a message: `the string "x"`, `the number 3`, `an object`. @internal */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case 'number':
      return `the number ${String(value)}`;
    case 'boolean':
      return `the boolean ${String(value)}`;
    case 'object':
      return 'an object';
    case 'undefined':
      return 'undefined';
    default:
      return `a ${typeof value}`;
  }
}

/** Short JSON text of a schema value for messages, cut after `max` characters. @internal */
export function showJson(value: unknown, max = 60): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** True for a value JSON Schema calls an object: not null, not an array. @internal */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON equality: numbers by value, objects by own keys regardless of order. @internal */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    if (!jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/**
 * A string equal for two values exactly when they are JSON-equal, so `uniqueItems` runs in linear
 * time instead of comparing every pair. @internal
 */
export function canonicalKey(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'number':
      return String(value);
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalKey).join(',')}]`;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalKey(record[key])}`).join(',')}}`;
    }
    default:
      return `<${typeof value}>`;
  }
}

/** Length of a string in Unicode code points (a surrogate pair counts once). @internal */
export function codePointLength(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count -= 1;
        i += 1;
      }
    }
  }
  return count;
}

/** `1 item`, `2 items`. @internal */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}

/** `a, b or c`. @internal */
export function orList(parts: readonly string[]): string {
  if (parts.length <= 1) return parts[0] ?? '';
  return `${parts.slice(0, -1).join(', ')} or ${parts[parts.length - 1]!}`;
}
