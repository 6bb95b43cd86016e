/**
 * The schema compiler: walks a schema document once, checks every keyword, and builds a tree of
 * small closures. Local `$ref`s become indirections filled in after the walk, so a recursive schema
 * compiles in bounded stack and a `$ref` loop that never reaches a property or item is rejected.
 * @module
 */
import type { Issue } from '../errors/index.js';
import { isJsonObject, keyPath, showJson, subjectOf } from './describe.js';
import { compileArrayKeywords } from './keywords-array.js';
import { compileLogicKeywords } from './keywords-logic.js';
import { compileObjectKeywords } from './keywords-object.js';
import { compileAnyValueKeywords, compileNumberKeywords, compileStringKeywords } from './keywords-value.js';
import {
  childPointer,
  createRefCheck,
  findReferenceLoop,
  resolveReference,
  toPointer,
  withinBudget,
} from './references.js';
import {
  ALWAYS,
  allOfChecks,
  readSchemaMap,
  type Check,
  type KeywordCompiler,
  type NodeScope,
  type SchemaSegment,
} from './types.js';

/** Deepest nesting of schema objects accepted. @internal */
export const MAX_SCHEMA_DEPTH = 64;

/** Most schema objects in one document (a JavaScript schema may share sub-objects). @internal */
export const MAX_SCHEMA_NODES = 50_000;

/** Keywords that only annotate, with the JavaScript type their value must have. */
const ANNOTATIONS: Readonly<Record<string, 'string' | 'boolean' | 'array' | 'any'>> = {
  $schema: 'string',
  $id: 'string',
  $comment: 'string',
  title: 'string',
  description: 'string',
  default: 'any',
  examples: 'array',
  deprecated: 'boolean',
  readOnly: 'boolean',
  writeOnly: 'boolean',
};

/** Keywords that assert or apply subschemas. */
const ASSERTIONS = [
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'dependentRequired',
  'dependentSchemas',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  '$ref',
  '$defs',
  'definitions',
] as const;

/** Every keyword the validator understands; any other keyword is rejected when compiling. @internal */
export const KEYWORDS: readonly string[] = Object.freeze([...ASSERTIONS, ...Object.keys(ANNOTATIONS)]);

const KNOWN = new Set(KEYWORDS);

const KEYWORD_COMPILERS: readonly KeywordCompiler[] = [
  compileAnyValueKeywords,
  compileNumberKeywords,
  compileStringKeywords,
  compileObjectKeywords,
  compileArrayKeywords,
  compileLogicKeywords,
];

/** Keywords whose next path segment is a name or an index, not another level of schema. */
const CONTAINERS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'allOf',
  'anyOf',
  'oneOf',
  'prefixItems',
]);

interface Entry {
  /** Filled once the schema at this location is compiled. */
  check: Check | null;
  segments: readonly SchemaSegment[];
  schema: unknown;
  /** `$ref` targets this schema may follow without moving to a property or item. */
  refs: Set<string>;
}

function schemaLevels(segments: readonly SchemaSegment[]): number {
  let levels = 0;
  for (let i = 0; i < segments.length; i += 1) {
    levels += 1;
    if (CONTAINERS.has(String(segments[i]))) i += 1;
  }
  return levels;
}

/** Compiles one schema document; `issues` lists every problem with the schema itself. @internal */
export class SchemaCompiler {
  /** Every problem found in the schema. */
  readonly issues: Issue[] = [];
  readonly #root: unknown;
  readonly #prefix: string;
  /** @internal */
  readonly _entries = new Map<string, Entry>();
  readonly #pending: Entry[] = [];
  #nodes = 0;

  constructor(root: unknown, prefix: string) {
    this.#root = root;
    this.#prefix = prefix;
  }

  /** Compiles the whole document and every `$ref` target; returns the root check. */
  compile(): Check {
    const root = this._node(this.#root, [], 0);
    for (let entry = this.#pending.pop(); entry !== undefined; entry = this.#pending.pop()) {
      if (entry.check === null) this._node(entry.schema, entry.segments, schemaLevels(entry.segments));
    }
    this.#rejectRefLoops();
    return root;
  }

  _fail(segments: readonly SchemaSegment[], message: string, code = 'invalid_schema'): void {
    let path = this.#prefix;
    for (const segment of segments)
      path = typeof segment === 'number' ? `${path}[${segment}]` : keyPath(path, segment);
    this.issues.push({ code, path, message });
  }

  #entry(segments: readonly SchemaSegment[], schema: unknown, pointer = toPointer(segments)): Entry {
    let entry = this._entries.get(pointer);
    if (entry === undefined) {
      entry = { check: null, segments, schema, refs: new Set() };
      this._entries.set(pointer, entry);
    }
    return entry;
  }

  _node(
    schema: unknown,
    segments: readonly SchemaSegment[],
    depth: number,
    pointer = toPointer(segments),
  ): Check {
    const entry = this.#entry(segments, schema, pointer);
    if (entry.check !== null) return entry.check;
    entry.check = ALWAYS; // a structural walk reaches each location once; this only guards re-entry
    this.#nodes += 1;
    if (this.#nodes === MAX_SCHEMA_NODES + 1) {
      this._fail(segments, `the schema has more than ${MAX_SCHEMA_NODES} schema objects`, 'schema_too_large');
    }
    if (this.#nodes > MAX_SCHEMA_NODES) return entry.check;
    if (schema === true) return entry.check;
    if (schema === false) {
      entry.check = function checkFalse(_value, path, out) {
        out?.push({ code: 'not_allowed', path, message: `${subjectOf(path)} is not allowed here` });
        return false;
      };
      return entry.check;
    }
    if (!isJsonObject(schema)) {
      this._fail(segments, `a schema must be an object or a boolean, got ${showJson(schema)}`);
      return entry.check;
    }
    if (depth > MAX_SCHEMA_DEPTH) {
      this._fail(
        segments,
        `the schema is nested more than ${MAX_SCHEMA_DEPTH} levels deep`,
        'schema_too_deep',
      );
      return entry.check;
    }
    this.#checkKeywords(schema, segments);
    const scope = new Scope(this, segments, pointer, depth, entry);
    const checks: Check[] = [];
    for (const compileKeywords of KEYWORD_COMPILERS) {
      const check = compileKeywords(schema, scope);
      if (check !== null) checks.push(check);
    }
    for (const key of ['$defs', 'definitions']) {
      for (const [name, sub] of readSchemaMap(schema, key, scope) ?? []) scope.sub([key, name], sub, true);
    }
    entry.check = withinBudget(allOfChecks(checks));
    return entry.check;
  }

  #checkKeywords(schema: Readonly<Record<string, unknown>>, segments: readonly SchemaSegment[]): void {
    for (const key of Object.keys(schema)) {
      if (KNOWN.has(key) && ANNOTATIONS[key] === undefined) continue;
      const at = [...segments, key];
      if (!KNOWN.has(key)) {
        if (!key.startsWith('x-')) this._fail(at, `keyword "${key}" is not supported`, 'unsupported_keyword');
        continue;
      }
      if (key === '$id' && segments.length > 0) {
        this._fail(
          at,
          'keyword "$id" is only supported at the top level of the schema',
          'unsupported_keyword',
        );
      }
      const kind = ANNOTATIONS[key];
      if (kind === undefined || kind === 'any') continue;
      const value = schema[key];
      const ok = kind === 'array' ? Array.isArray(value) : typeof value === kind;
      if (!ok) this._fail(at, `"${key}" must be ${kind === 'array' ? 'an array' : `a ${kind}`}`);
    }
  }

  _ref(reference: string, segments: readonly SchemaSegment[], from: Entry): Check {
    const resolved = resolveReference(this.#root, reference);
    if (!resolved.ok) {
      this._fail([...segments, '$ref'], resolved.message, resolved.code);
      return ALWAYS;
    }
    const entry = this.#entry(resolved.segments, resolved.schema);
    from.refs.add(toPointer(resolved.segments));
    if (entry.check === null) this.#pending.push(entry);
    return createRefCheck(() => entry.check!);
  }

  /** Rejects `$ref` chains that come back to where they started while staying on the same value. */
  #rejectRefLoops(): void {
    const edges = new Map<string, ReadonlySet<string>>();
    for (const [pointer, entry] of this._entries) if (entry.refs.size > 0) edges.set(pointer, entry.refs);
    const loop = findReferenceLoop(edges);
    if (loop === null) return;
    this._fail(
      this._entries.get(loop[0]!)!.segments,
      `"$ref" loops back to this schema without reaching a property or item: ${loop.map((pointer) => `#${pointer}`).join(' -> ')}`,
      'ref_loop',
    );
  }
}

/** The view of the compiler one schema object's keyword compilers get (a class: no closures per node). */
class Scope implements NodeScope {
  constructor(
    private readonly compiler: SchemaCompiler,
    private readonly segments: readonly SchemaSegment[],
    private readonly pointer: string,
    private readonly depth: number,
    private readonly entry: Entry,
  ) {}

  sub(relative: readonly SchemaSegment[], schema: unknown, descend: boolean): Check {
    const segments = [...this.segments, ...relative];
    let pointer = this.pointer;
    for (const segment of relative) pointer = childPointer(pointer, segment);
    const check = this.compiler._node(schema, segments, this.depth + 1, pointer);
    if (!descend) {
      const child = this.compiler._entries.get(pointer);
      if (child !== undefined) for (const target of child.refs) this.entry.refs.add(target);
    }
    return check;
  }

  ref(reference: string): Check {
    return this.compiler._ref(reference, this.segments, this.entry);
  }

  fail(relative: readonly SchemaSegment[], message: string, code?: string): void {
    this.compiler._fail([...this.segments, ...relative], message, code);
  }
}
