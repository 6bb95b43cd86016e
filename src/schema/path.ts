/**
 * Plain data paths such as `table.rows[0][2]` or `customer.name`, used by wires, conditions and
 * references. Paths are parsed, never evaluated, and can never reach `__proto__`, `constructor`
 * or `prototype`.
 * @module
 */

/** One step of a path: a property name or an array index. */
export type PathSegment = string | number;

/** Segments that could reach an object's prototype; rejected everywhere. */
export const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Result of {@link parsePath}. */
export type ParsedPath = { ok: true; segments: PathSegment[] } | { ok: false; message: string };

/**
 * Parses `a.b[0].c` into `['a', 'b', 0, 'c']`. Property names may hold any character but
 * `.`, `[`, `]`, `{` and `}`; indexes are non-negative integers. An empty string is the empty path.
 */
export function parsePath(path: string): ParsedPath {
  const segments: PathSegment[] = [];
  const text = path.trim();
  if (text === '') return { ok: true, segments };
  let i = 0;
  let expectName = true;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '[') {
      const end = text.indexOf(']', i);
      if (end === -1) return { ok: false, message: `unclosed "[" in path "${path}"` };
      const inner = text.slice(i + 1, end).trim();
      if (!/^\d+$/.test(inner))
        return { ok: false, message: `"[${inner}]" in path "${path}" is not an array index` };
      segments.push(Number(inner));
      i = end + 1;
      expectName = false;
      continue;
    }
    if (ch === '.') {
      if (expectName) return { ok: false, message: `empty property name in path "${path}"` };
      i += 1;
      expectName = true;
      if (i >= text.length) return { ok: false, message: `path "${path}" ends with "."` };
      continue;
    }
    if (!expectName) return { ok: false, message: `expected "." or "[" at position ${i} of path "${path}"` };
    let end = i;
    while (end < text.length && !'.[]{}'.includes(text[end]!)) end += 1;
    if (end === i) return { ok: false, message: `unexpected "${ch}" in path "${path}"` };
    const name = text.slice(i, end).trim();
    if (FORBIDDEN_SEGMENTS.has(name)) {
      return { ok: false, message: `path "${path}" may not use "${name}"` };
    }
    segments.push(name);
    i = end;
    expectName = false;
  }
  return { ok: true, segments };
}

/** Formats segments back into a path string. */
export function formatSegments(segments: readonly PathSegment[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}

/** A `{{...}}` reference found in a string. */
export interface ReferenceMatch {
  /** The text between the braces, trimmed. */
  expression: string;
  /** Offset of `{{` in the string. */
  start: number;
  /** Offset just past `}}`. */
  end: number;
}

const REFERENCE = /\{\{([^{}]*)\}\}/g;

/** Finds every `{{...}}` reference in a string, in order. */
export function findReferences(text: string): ReferenceMatch[] {
  const found: ReferenceMatch[] = [];
  for (const match of text.matchAll(REFERENCE)) {
    found.push({ expression: match[1]!.trim(), start: match.index, end: match.index + match[0].length });
  }
  return found;
}

/** True when `text` is exactly one reference (so it keeps the referenced value's type). */
export function isWholeReference(text: string): boolean {
  const refs = findReferences(text);
  return refs.length === 1 && refs[0]!.start === 0 && refs[0]!.end === text.length;
}

/** A path written with or without `{{ }}` around it (a condition's `data_path`), without them. @internal */
export function unbraced(path: string): string {
  return path.trim().replace(/^\{\{\s*|\s*\}\}$/g, '');
}

/** A key that can be written after a `.` in a path and read back by `parsePath`. */
const PLAIN_KEY = /^[^.[\]{}"\s](?:[^.[\]{}"]*[^.[\]{}"\s])?$/;

/** Path of property `key` under `path`: `a.b`, or `a["x.y"]` when the key needs quoting. @internal */
export function keyPath(path: string, key: string): string {
  if (PLAIN_KEY.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/** Path of item `index` under `path`: `a[0]`. @internal */
export function indexPath(path: string, index: number): string {
  return `${path}[${index}]`;
}
