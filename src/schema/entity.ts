import { z } from 'zod';
import { addIssue } from './issues.js';
import { ResourceNameSchema } from './resource-name.js';

/** Column types an entity may declare; each cell read is coerced to its column's type. */
export const COLUMN_TYPES = ['NUMBER', 'STRING', 'BOOLEAN', 'DATE', 'DATETIME'] as const;

/** A column type of an entity. */
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** A name used for entities, workflows, steps, scripts: non-empty, no leading or trailing spaces. */
export const NameSchema = z
  .string()
  .min(1)
  .max(200)
  .refine((s) => s.trim() === s, { message: 'must not start or end with spaces' });

/**
 * Rules of a `NUMBER` column, as the `number` config of a data-table column: written values must
 * keep them (`step` counts from `min`, or from 0), and forms that edit the column show them.
 */
export const ColumnNumberRulesSchema = z.object({
  /** Smallest value allowed. */
  min: z.number().int().optional(),
  /** Largest value allowed. */
  max: z.number().int().optional(),
  /** Values are `min + k * step` for a whole `k`. */
  step: z.number().positive().optional(),
  /** Shown with latin (ASCII) digits; kept for the data-table column shape, no effect on writes. */
  latin_numbering: z.boolean().optional(),
});

/** Longest expression (a formula, a check, a step condition) accepted, in characters. */
export const MAX_EXPRESSION_LENGTH = 2000;

/** An expression in CEL (Common Expression Language) over the row's columns. */
export const ExpressionSchema = z.string().min(1).max(MAX_EXPRESSION_LENGTH);

/** Functions a rollup computes over the rows that point at a row. */
export const ROLLUP_FUNCTIONS = ['count', 'sum', 'min', 'max', 'avg'] as const;

/** A column read through a foreign key: the `column` of the row the `relationship` points at. */
export const LookupSchema = z.strictObject({
  /** A relationship whose source entity is this one. */
  relationship: NameSchema,
  /** A column of the relationship's target entity. */
  column: NameSchema,
});

/** A filter of a rollup's rows, in the shape of a `get_entity` filter. */
export const RollupFilterSchema = z.strictObject({
  column: z.string(),
  operator: z.string(),
  value_type: z.enum(['NUMBER', 'STRING', 'BOOLEAN']).optional(),
  value: z.unknown().optional(),
});

/** A summary of the rows of another entity that point at this row through a relationship. */
export const RollupSchema = z.strictObject({
  /** A relationship whose target entity is this one. */
  relationship: NameSchema,
  /** What to compute: a count of rows, or the sum, least, largest or mean of `column`. */
  function: z.enum(ROLLUP_FUNCTIONS),
  /** The column of the source entity summarized; every function but `count` needs one. */
  column: NameSchema.optional(),
  /** Only the source rows matching every filter count. */
  filters: z.array(RollupFilterSchema).max(20).optional(),
});

/** Text formats a `STRING` column may be held to. */
export const COLUMN_FORMATS = ['email', 'url'] as const;

/** A column definition of an entity. */
export const EntityColumnSchema = z.object({
  name: NameSchema,
  type: z.enum(COLUMN_TYPES),
  /** Rules of a `NUMBER` column's values. */
  number: ColumnNumberRulesSchema.optional(),
  /** Computed: the value of a CEL expression over the row's columns (read only, no sheet header). */
  formula: ExpressionSchema.optional(),
  /** Computed: a column of the row a relationship's foreign key points at (read only, no sheet header). */
  lookup: LookupSchema.optional(),
  /** Computed: a count, sum, min, max or mean over the rows pointing at this one (read only, no sheet header). */
  rollup: RollupSchema.optional(),
  /** Every written row must give the column a value. */
  required: z.boolean().optional(),
  /** Written values must be one of these. */
  enum: z
    .array(z.union([z.string(), z.number()]))
    .min(1)
    .max(1000)
    .optional(),
  /** Shortest text allowed, in characters. */
  min_length: z.number().int().min(0).optional(),
  /** Longest text allowed, in characters. */
  max_length: z.number().int().min(0).optional(),
  /** A regular expression written text must match somewhere (anchor it with `^...$`); run in linear time. */
  pattern: z.string().min(1).max(1000).optional(),
  /** A format written text must have: `email` or `url` (http or https). */
  format: z.enum(COLUMN_FORMATS).optional(),
});

/** A rule every written row must keep: a CEL expression over its stored columns that is true. */
export const EntityCheckSchema = z.strictObject({
  /** A CEL expression of type bool; a row for which it is false is refused. */
  expression: ExpressionSchema,
  /** What the refusal says. */
  message: z.string().min(1).max(500),
});

/** Where an entity's rows live. `origin` is zero-based: `{row: 0, col: 0}` is cell A1. */
export const SpreadsheetConfigSchema = z.object({
  spreadsheet_id: z.string().min(1),
  sheet_name: z.string().min(1),
  origin: z.object({
    row: z.number().int().min(0),
    col: z.number().int().min(0),
  }),
});

/** An entity registration body, with its cross-field rules. */
export const EntitySchema = z
  .object({
    name: ResourceNameSchema,
    description: z.string().optional(),
    columns: z.array(EntityColumnSchema).min(1),
    primary_key: z.array(z.string()).min(1),
    spreadsheet_config: SpreadsheetConfigSchema,
    /** Rules every written row must keep, each a CEL expression over the row. */
    checks: z.array(EntityCheckSchema).max(100).optional(),
  })
  .superRefine(
    (entity, ctx) => {
      const seen = new Set<string>();
      entity.columns.forEach((column, index) => {
        if (typeof column?.name !== 'string') return;
        if (seen.has(column.name)) {
          addIssue(
            ctx,
            ['columns', index, 'name'],
            `column name "${column.name}" is used more than once`,
            'duplicate_column',
          );
        }
        seen.add(column.name);
      });
      entity.columns.forEach((column, index) => {
        if (column?.number === undefined) return;
        if (column.type !== 'NUMBER')
          addIssue(
            ctx,
            ['columns', index, 'number'],
            `column "${column.name}" is ${column.type}; only NUMBER columns take a number config`,
            'invalid',
          );
        const { min, max } = column.number;
        if (min !== undefined && max !== undefined && min > max)
          addIssue(
            ctx,
            ['columns', index, 'number'],
            `column "${column.name}" has min ${min} above max ${max}`,
            'invalid',
          );
      });
      const keySeen = new Set<string>();
      entity.primary_key.forEach((key, index) => {
        if (typeof key !== 'string') return;
        if (!seen.has(key)) {
          addIssue(
            ctx,
            ['primary_key', index],
            `primary_key names "${key}", which is not a column of the entity (columns: ${[...seen].join(', ')})`,
            'unknown_column',
          );
        } else if (keySeen.has(key)) {
          addIssue(ctx, ['primary_key', index], `primary_key names "${key}" more than once`, 'duplicate_key');
        }
        keySeen.add(key);
      });
    },
    // Check keys and names even when a column's type is wrong, so every problem is reported at once.
    { when: (payload) => hasArrays(payload.value, 'columns', 'primary_key') },
  );

/** True when `value` is an object whose named fields are arrays (of objects with string names, for columns). @internal */
export function hasArrays(value: unknown, ...fields: string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return fields.every((field) => Array.isArray((value as Record<string, unknown>)[field]));
}

/** An entity definition: its columns, primary key and sheet. */
export type Entity = z.infer<typeof EntitySchema>;
/** An entity definition as written: what `engine.catalog.createEntity` and `putEntity` take. */
export type EntityBody = z.input<typeof EntitySchema>;
/** A column of an entity. */
export type EntityColumn = z.infer<typeof EntityColumnSchema>;
/** A lookup column's source: a relationship and a column of its target. */
export type Lookup = z.infer<typeof LookupSchema>;
/** A rollup column's source: a relationship, a function, a column and filters of its source rows. */
export type Rollup = z.infer<typeof RollupSchema>;
/** A rule of an entity's rows: a CEL expression and what a refusal says. */
export type EntityCheck = z.infer<typeof EntityCheckSchema>;
/** Where an entity's rows live. */
export type SpreadsheetConfig = z.infer<typeof SpreadsheetConfigSchema>;
