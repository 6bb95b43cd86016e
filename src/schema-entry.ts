/**
 * `stepwire/schema`: the catalogue behind the definitions. The zod schemas of every resource (the
 * single source of truth for shapes), the constants they are built from (`COLUMN_TYPES`,
 * `WRITE_MODES`, `STEP_TYPES`...), the parsers of what they hold (references, paths, names,
 * redirects), `check` and `parse` to validate a value against a schema with stepwire's issues, the
 * JSON Schema compiler of workflow inputs, and the table of error codes the HTTP handler answers
 * with. An app developer rarely needs it: the root entry `stepwire` has the engine, the builders and
 * the types of these shapes.
 * @example
 * ```ts
 * import { EntitySchema, check } from 'stepwire/schema';
 * const result = check(EntitySchema, JSON.parse(text));
 * if (!result.ok) console.log(result.issues);
 * ```
 * @module schema
 */
export * from './schema/index.js';
export {
  compileSchema,
  SUPPORTED_KEYWORDS,
  type CompiledSchema,
  type CompileSchemaOptions,
} from './json-schema/index.js';
export { ERROR_CODES, errorAnswer, issuesUnder, type ErrorAnswer, type Issue } from './errors/index.js';
