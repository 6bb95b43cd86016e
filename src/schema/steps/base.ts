import { z } from 'zod';
import { ExpressionSchema, NameSchema } from '../entity.js';
import { isWholeReference, parsePath, unbraced } from '../path.js';

/** A data path such as `table.rows[0]`, checked when parsed. @internal */
export const DataPathSchema = z.string().superRefine((path, ctx) => {
  const parsed = parsePath(path);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message, params: { code: 'invalid_path' } });
});

/** A condition's `data_path`, with or without braces (`a.x` or `{{a.x}}`). */
const ConditionPathSchema = z
  .string()
  .superRefine((path, ctx) => {
    const parsed = parsePath(unbraced(path));
    if (!parsed.ok)
      ctx.addIssue({ code: 'custom', message: parsed.message, params: { code: 'invalid_path' } });
  })
  .pipe(z.string().min(1));

/**
 * A condition: the step runs only when the value at `data_path` equals `value` (JSON equality). The
 * path may be written with or without braces (`a.x` or `{{a.x}}`).
 */
export const ValueConditionSchema = z.object({ data_path: ConditionPathSchema, value: z.unknown() });

/**
 * A condition as a CEL expression over the workflow input, earlier steps' outputs and (in a
 * `for_each` step) `item` and `item_index`: the step runs only when it is true, e.g.
 * `{ expression: "orders.body.table.rows.size() > 0" }`.
 */
export const ExpressionConditionSchema = z.strictObject({ expression: ExpressionSchema });

/**
 * A condition: `{ data_path, value }` (JSON equality) or `{ expression }` (CEL). One object schema
 * whose refinement tells the two apart, so a problem is reported at its field (`value is required`),
 * not as a union that matches no shape.
 */
export const ConditionSchema = z
  .object({
    /** The path of the value compared with `value`. */
    data_path: ConditionPathSchema.optional(),
    /** The value the one at `data_path` must equal. */
    value: z.unknown().optional(),
    /** A CEL expression that must be true (instead of `data_path` and `value`). */
    expression: ExpressionSchema.optional(),
  })
  .superRefine((condition, ctx) => {
    const has = (key: string) => Object.prototype.hasOwnProperty.call(condition, key);
    if (has('expression')) {
      for (const key of ['data_path', 'value'])
        if (has(key))
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `a condition is { expression } or { data_path, value }, not both: ${key} beside expression`,
            params: { code: 'invalid' },
          });
      return;
    }
    for (const key of ['data_path', 'value'])
      if (!has(key))
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} is required`,
          params: { code: 'required' },
        });
  }) as unknown as z.ZodType<
  z.infer<typeof ValueConditionSchema> | z.infer<typeof ExpressionConditionSchema>,
  z.input<typeof ValueConditionSchema> | z.input<typeof ExpressionConditionSchema>
>;

/** Opt-in retries of a step: `retry: {}` is 3 attempts, the first delay 1 s, doubling up to 30 s. */
export const StepRetrySchema = z.object({
  /** Total attempts, the first included. @default 3 */
  attempts: z.number().int().min(1).max(20).optional(),
  /** First delay in milliseconds; doubles each time. @default 1000 */
  backoff_ms: z.number().int().min(0).optional(),
  /** Largest delay in milliseconds. @default 30000 */
  max_backoff_ms: z.number().int().min(0).optional(),
});

/** What a failure of a step (or of one item of a `for_each` step) does: fail the run, or go on. */
export const ON_ERROR = ['fail', 'continue'] as const;

/**
 * A name references start with (a step's, the workflow input's): a column-style name without ".",
 * "[", "]", "{" or "}", which references use as path punctuation. `what` names it in the message.
 */
export function referenceNameSchema(what: string) {
  return NameSchema.refine((n) => !/[.[\]{}]/.test(n), {
    message: `${what} may not contain ".", "[", "]", "{" or "}"`,
  });
}

/** Most items of one `for_each` step that may run at the same time. */
export const MAX_ITEM_CONCURRENCY = 32;

/**
 * The fields every step has, whatever its type. A field every type gains is added here once; each step
 * type adds only `type` and its own `<type>_data` block.
 */
export const StepBaseSchema = z.object({
  /** Unique within the workflow; references use it, so it may not contain ".", "[", "]", "{" or "}". */
  name: referenceNameSchema('step names'),
  /** The step runs only when every condition holds; otherwise it is skipped. */
  conditions: z.array(ConditionSchema).optional(),
  /** Opt-in retries with backoff. */
  retry: StepRetrySchema.optional(),
  /** Time limit of one attempt, in milliseconds. */
  timeout_ms: z.number().int().min(1).optional(),
  /**
   * Runs the step once per item: a reference such as `{{orders.body.table}}` to an array, or to a data
   * table whose rows become objects by column name. The step's data may use `{{item.x}}` and
   * `{{item_index}}`; its output is `{ items, succeeded, failed, skipped }`, `items` in input order.
   */
  for_each: z
    .string()
    .refine(isWholeReference, {
      message: 'for_each must be exactly one reference, e.g. "{{orders.body.table}}"',
      params: { code: 'invalid_reference' },
    })
    .optional(),
  /** Items of a `for_each` step that run at the same time, 1 to 32. @default 1 */
  concurrency: z.number().int().min(1).max(MAX_ITEM_CONCURRENCY).optional(),
  /**
   * `fail` fails the run when the step fails; `continue` makes the failure the step's output
   * `{ error: { code, message } }` and the run goes on. In a `for_each` step it applies to each item.
   * @default 'fail'
   */
  on_error: z.enum(ON_ERROR).optional(),
});

/** The fields every step has, as written. */
export type StepBaseBody = z.input<typeof StepBaseSchema>;

/** The key of a step type's own data block: `l2_data` for type `l2`. */
export type StepDataKey<T extends string> = `${T}_data`;

/** The key of a step type's own data block: `l2_data` for type `l2`. @internal */
export function stepDataKey<T extends string>(type: T): StepDataKey<T> {
  return `${type}_data`;
}

/** The shape of one step type's schema: the common fields, `type`, and its `<type>_data` block. */
export type StepVariantShape<T extends string, D extends z.ZodType> = typeof StepBaseSchema.shape & {
  type: z.ZodLiteral<T>;
} & { [K in StepDataKey<T>]: D };

/**
 * The schema of one step type: the common fields, `type: <type>` and a required `<type>_data` block
 * validated by `data`.
 * @example
 * ```ts
 * const WaitStepSchema = defineStepSchema('wait', z.object({ ms: z.number().int().min(0) }));
 * ```
 */
export function defineStepSchema<const T extends string, D extends z.ZodType>(
  type: T,
  data: D,
): z.ZodObject<StepVariantShape<T, D>> {
  const { name, ...common } = StepBaseSchema.shape;
  const shape = { name, type: z.literal(type), ...common, [stepDataKey(type)]: data };
  // The computed `<type>_data` key is typed by StepVariantShape; TypeScript cannot follow it here.
  return z.object(shape) as unknown as z.ZodObject<StepVariantShape<T, D>>;
}

/** The `retry` of a step. */
export type StepRetry = z.infer<typeof StepRetrySchema>;
/** A step condition. */
export type Condition = z.infer<typeof ConditionSchema>;
/** What a failure of a step does: `fail` or `continue`. */
export type OnError = (typeof ON_ERROR)[number];
