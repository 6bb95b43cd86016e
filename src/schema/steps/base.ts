import { z } from 'zod';
import { NameSchema } from '../entity.js';
import { parsePath } from '../path.js';

/** A data path such as `table.rows[0]`, checked when parsed. @internal */
export const DataPathSchema = z.string().superRefine((path, ctx) => {
  const parsed = parsePath(path);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message, params: { code: 'invalid_path' } });
});

/** A condition: the step runs only when the value at `data_path` equals `value` (JSON equality). */
export const ConditionSchema = z.object({
  data_path: DataPathSchema.pipe(z.string().min(1)),
  value: z.unknown(),
});

/** Opt-in retries of a step. */
export const StepRetrySchema = z.object({
  /** Total attempts, the first included. */
  attempts: z.number().int().min(1).max(20),
  /** First delay in milliseconds; doubles each time. @default 1000 */
  backoff_ms: z.number().int().min(0).optional(),
  /** Largest delay in milliseconds. @default 30000 */
  max_backoff_ms: z.number().int().min(0).optional(),
});

/**
 * The fields every step has, whatever its type. A field every type gains is added here once; each step
 * type adds only `type` and its own `<type>_data` block.
 */
export const StepBaseSchema = z.object({
  /** Unique within the workflow; references use it, so it may not contain ".", "[", "]", "{" or "}". */
  name: NameSchema.refine((n) => !/[.[\]{}]/.test(n), {
    message: 'step names may not contain ".", "[", "]", "{" or "}"',
  }),
  /** The step runs only when every condition holds; otherwise it is skipped. */
  conditions: z.array(ConditionSchema).optional(),
  /** Opt-in retries with backoff. */
  retry: StepRetrySchema.optional(),
  /** Time limit of one attempt, in milliseconds. */
  timeout_ms: z.number().int().min(1).optional(),
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
