/**
 * Workflow steps: one schema per step type, joined into one union on `type`. Adding a step type is one
 * schema file (see {@link defineStepSchema}) and one entry in {@link STEP_SCHEMAS}.
 * @module
 */
import { z } from 'zod';
import { addIssue } from '../issues.js';
import { AtlasStepSchema } from './atlas.js';
import { stepDataKey } from './base.js';
import { L2StepSchema } from './l2.js';
import { RequestStepSchema } from './request.js';
import { WaitStepSchema } from './wait.js';

export {
  ConditionSchema,
  StepRetrySchema,
  StepBaseSchema,
  ON_ERROR,
  MAX_ITEM_CONCURRENCY,
  defineStepSchema,
  type StepBaseBody,
  type StepDataKey,
  type StepVariantShape,
  type StepRetry,
  type Condition,
  type OnError,
} from './base.js';
export * from './l2.js';
export * from './atlas.js';
export * from './request.js';
export * from './wait.js';

/** The schema of every step type, one each. */
export const STEP_SCHEMAS = [L2StepSchema, AtlasStepSchema, RequestStepSchema, WaitStepSchema] as const;

/** Step types: `l2` (an action), `atlas` (entity data), `request` (HTTP request), `wait` (a person, an event or a time). */
export const STEP_TYPES = STEP_SCHEMAS.map((schema) => schema.shape.type.value) as unknown as TypesOf<
  typeof STEP_SCHEMAS
>;

type TypesOf<S extends readonly unknown[]> = {
  readonly [I in keyof S]: S[I] extends z.ZodObject<{ type: z.ZodLiteral<infer T> }> ? T : never;
};

/** The name of a step type. */
export type StepTypeName = (typeof STEP_TYPES)[number];

const StepUnionSchema = z.discriminatedUnion('type', STEP_SCHEMAS);

/**
 * A workflow step: a union on `type`. A step carries its own type's data block and no other type's;
 * both rules are checked on the step as written, before its fields, so they name the block.
 */
export const StepSchema = z.preprocess<unknown, typeof StepUnionSchema, z.input<typeof StepUnionSchema>>(
  (step, ctx) => {
    checkDataBlocks(step, ctx);
    return step;
  },
  StepUnionSchema,
);

/** A workflow step. */
export type Step = z.infer<typeof StepSchema>;
/** The step of one type. */
export type StepOf<T extends StepTypeName> = Extract<Step, { type: T }>;
/** A workflow step as written (before defaults and normalization). */
export type StepBody = z.input<typeof StepSchema>;
/** A step of one type as written. */
export type StepBodyOf<T extends StepTypeName> = Extract<StepBody, { type: T }>;

/**
 * Adds an issue for a missing own data block and for each block of another type. Those issues stop
 * the union, so the step's other fields are checked here too: every problem is reported at once.
 */
function checkDataBlocks(step: unknown, ctx: z.core.$RefinementCtx): void {
  if (typeof step !== 'object' || step === null) return;
  const type = (step as { type?: unknown }).type;
  const index = STEP_TYPES.findIndex((name) => name === type);
  if (index === -1) return; // the union reports the type
  const own = STEP_TYPES[index]!;
  const fields = step as Record<string, unknown>;
  const needed = stepDataKey(own);
  const missing = fields[needed] === undefined;
  const foreign = STEP_TYPES.filter((other) => other !== own && fields[stepDataKey(other)] !== undefined);
  if (!missing && foreign.length === 0) return;
  if (missing) addIssue(ctx, [needed], `a step of type "${own}" needs ${needed}`, 'required');
  for (const other of foreign) {
    const block = stepDataKey(other);
    addIssue(
      ctx,
      [block],
      `${block} does not belong to a step of type "${own}" (it takes ${needed})`,
      'unexpected_data',
    );
  }
  const variant: z.ZodObject = STEP_SCHEMAS[index]!;
  const rest = missing ? variant.omit({ [needed]: true } as Record<string, true>) : variant;
  for (const issue of rest.safeParse(step).error?.issues ?? []) ctx.addIssue({ ...issue });
}
