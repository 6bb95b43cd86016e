import { z } from 'zod';
import { addIssue } from './issues.js';
import { NameSchema, hasArrays } from './entity.js';
import { ResourceNameSchema } from './resource-name.js';
import { OperationSchema } from './get-entity.js';
import { parsePath } from './path.js';

/** Step types: `l2` (an action), `atlas` (entity data), `request` (HTTP request). */
export const STEP_TYPES = ['l2', 'atlas', 'request'] as const;

/** HTTP methods a `request` step may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** Write modes of a transform's output entity. */
export const WRITE_MODES = ['append', 'replace'] as const;

const dataPath = z.string().superRefine((path, ctx) => {
  const parsed = parsePath(path);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message, params: { code: 'invalid_path' } });
});

/** A condition: the step runs only when the value at `data_path` equals `value` (JSON equality). */
export const ConditionSchema = z.object({
  data_path: dataPath.pipe(z.string().min(1)),
  value: z.unknown(),
});

/** `l2_data`: a named action of a provider and module. */
export const L2DataSchema = z.object({
  provider: z.string().min(1),
  module: z.string().min(1),
  action: z.string().min(1),
  input_data: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** `request_data`: an HTTP request. The method is case-insensitive and defaults to GET. */
export const RequestDataSchema = z.object({
  url: z.string().min(1),
  method: z
    .string()
    .transform((m) => m.toUpperCase())
    .pipe(z.enum(HTTP_METHODS))
    .optional(),
  headers: z.record(z.string(), z.string()).optional(),
  path_params: z.record(z.string(), z.unknown()).optional(),
  query_params: z.record(z.string(), z.unknown()).optional(),
  body: z.unknown().optional(),
});

/** An input entity of an `atlas` step: `{ name }` or a plain string (a name or a reference). */
export const InputEntitySchema = z.union([z.object({ name: z.string().min(1) }), z.string().min(1)], {
  error: 'each input entity must be an object with a name, or a string',
});

/** An output entity of a `transform` step. */
export const OutputEntitySchema = z.object({
  name: z.string().min(1),
  write_mode: z.enum(WRITE_MODES),
});

/** `atlas_data` (SPEC 2.5). */
export const AtlasDataSchema = z
  .object({
    action: z.enum(['transform', 'get']),
    input_data: z
      .object({
        language: z.string().optional(),
        code_file: z.string().min(1).optional(),
        operation: OperationSchema.optional(),
        page_size: z.number().int().min(1).optional(),
        page_number: z.number().int().min(1).optional(),
      })
      .optional(),
    input_entities: z.array(InputEntitySchema).optional(),
    output_entities: z.array(OutputEntitySchema).optional(),
  })
  .superRefine((atlas, ctx) => {
    if (atlas.action === 'transform') {
      if (!atlas.input_data?.code_file)
        addIssue(
          ctx,
          ['input_data', 'code_file'],
          'a transform needs input_data.code_file, the name of its script',
          'required',
        );
      const language = atlas.input_data?.language;
      if (language !== undefined && !['javascript', 'js'].includes(language.toLowerCase())) {
        addIssue(
          ctx,
          ['input_data', 'language'],
          `language "${language}" is not supported; use "javascript"`,
          'invalid_value',
        );
      }
      if (!atlas.output_entities || atlas.output_entities.length === 0) {
        addIssue(ctx, ['output_entities'], 'a transform needs at least one output entity', 'required');
      }
    } else {
      if (!atlas.input_entities || atlas.input_entities.length !== 1) {
        addIssue(ctx, ['input_entities'], 'a get step reads exactly one input entity', 'invalid');
      }
    }
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

/** A workflow step (SPEC 2.4). */
export const StepSchema = z
  .object({
    name: NameSchema.refine((n) => !/[.[\]{}]/.test(n), {
      message: 'step names may not contain ".", "[", "]", "{" or "}"',
    }),
    type: z.enum(STEP_TYPES),
    conditions: z.array(ConditionSchema).optional(),
    l2_data: L2DataSchema.optional(),
    request_data: RequestDataSchema.optional(),
    atlas_data: AtlasDataSchema.optional(),
    retry: StepRetrySchema.optional(),
    timeout_ms: z.number().int().min(1).optional(),
  })
  .superRefine((step, ctx) => {
    const needed = step.type === 'l2' ? 'l2_data' : step.type === 'atlas' ? 'atlas_data' : 'request_data';
    if (step[needed] === undefined)
      addIssue(ctx, [needed], `a step of type "${step.type}" needs ${needed}`, 'required');
    for (const block of ['l2_data', 'atlas_data', 'request_data'] as const) {
      if (block !== needed && step[block] !== undefined) {
        addIssue(
          ctx,
          [block],
          `${block} does not belong to a step of type "${step.type}" (it takes ${needed})`,
          'unexpected_data',
        );
      }
    }
  });

/** A wire: copies data from a step (or the workflow input) into a step's input. */
export const WireSchema = z.object({
  source_name: z.string().min(1),
  source_data_path: dataPath.optional(),
  target_name: z.string().min(1),
  target_data_path: dataPath.optional(),
});

/** `workflow_input`: its name, JSON Schema and defaults. */
export const WorkflowInputSchema = z
  .object({
    name: NameSchema,
    input_schema: z.record(z.string(), z.unknown()),
    default_data: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((input, ctx) => {
    const { properties, required } = input.input_schema;
    if (typeof properties !== 'object' || properties === null || !Array.isArray(required)) return;
    required.forEach((name, i) => {
      if (typeof name === 'string' && !Object.prototype.hasOwnProperty.call(properties, name)) {
        addIssue(
          ctx,
          ['input_schema', 'required', i],
          `required names "${name}", which is not one of the input's properties (${Object.keys(properties).join(', ')})`,
          'unknown_property',
        );
      }
    });
  });

/** `workflow_output`: its name and the values built from references. */
export const WorkflowOutputSchema = z.object({
  name: NameSchema,
  output_data: z.unknown().optional(),
});

/** A workflow definition (SPEC 2.4). */
export const WorkflowSchema = z
  .object({
    name: ResourceNameSchema,
    description: z.string().optional(),
    steps: z.array(StepSchema),
    wires: z.array(WireSchema),
    workflow_input: WorkflowInputSchema.optional(),
    workflow_output: WorkflowOutputSchema.optional(),
  })
  .superRefine(
    (workflow, ctx) => {
      const inputName = workflow.workflow_input?.name ?? 'input';
      const names = new Set<string>();
      workflow.steps.forEach((step, index) => {
        if (typeof step?.name !== 'string') return;
        if (names.has(step.name))
          addIssue(
            ctx,
            ['steps', index, 'name'],
            `step name "${step.name}" is used more than once`,
            'duplicate_step',
          );
        if (step.name === inputName)
          addIssue(
            ctx,
            ['steps', index, 'name'],
            `step name "${step.name}" is the name of the workflow input`,
            'duplicate_step',
          );
        names.add(step.name);
      });
      workflow.wires.forEach((wire, index) => {
        if (typeof wire?.source_name !== 'string' || typeof wire.target_name !== 'string') return;
        if (wire.source_name !== inputName && !names.has(wire.source_name)) {
          addIssue(
            ctx,
            ['wires', index, 'source_name'],
            `wire source "${wire.source_name}" is neither a step nor the workflow input "${inputName}"`,
            'unknown_step',
          );
        }
        if (!names.has(wire.target_name)) {
          addIssue(
            ctx,
            ['wires', index, 'target_name'],
            `wire target "${wire.target_name}" is not a step of the workflow`,
            'unknown_step',
          );
        }
        if (wire.source_name === wire.target_name) {
          addIssue(
            ctx,
            ['wires', index, 'target_name'],
            `wire from "${wire.source_name}" to itself`,
            'cycle',
          );
        }
      });
    },
    // Cross-step checks run even when one step has a field error, so every problem is reported at once.
    { when: (payload) => hasArrays(payload.value, 'steps', 'wires') },
  );

/** A workflow definition. */
export type Workflow = z.infer<typeof WorkflowSchema>;
/** A workflow definition as written (before defaults and normalization). */
export type WorkflowInputBody = z.input<typeof WorkflowSchema>;
/** A workflow step. */
export type Step = z.infer<typeof StepSchema>;
/** A wire between steps. */
export type Wire = z.infer<typeof WireSchema>;
/** A step condition. */
export type Condition = z.infer<typeof ConditionSchema>;
/** `l2_data` of a step. */
export type L2Data = z.infer<typeof L2DataSchema>;
/** `request_data` of a step. */
export type RequestData = z.infer<typeof RequestDataSchema>;
/** `atlas_data` of a step. */
export type AtlasData = z.infer<typeof AtlasDataSchema>;
/** `workflow_input`. */
export type WorkflowInput = z.infer<typeof WorkflowInputSchema>;
/** `workflow_output`. */
export type WorkflowOutput = z.infer<typeof WorkflowOutputSchema>;
