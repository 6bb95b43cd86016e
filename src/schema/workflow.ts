import { z } from 'zod';
import { addIssue } from './issues.js';
import { NameSchema, hasArrays } from './entity.js';
import { ResourceNameSchema } from './resource-name.js';
import { DataPathSchema, referenceNameSchema } from './steps/base.js';
import { StepSchema } from './steps/index.js';

/** A wire: copies data from a step (or the workflow input) into a step's input. */
export const WireSchema = z.object({
  source_name: z.string().min(1),
  source_data_path: DataPathSchema.optional(),
  target_name: z.string().min(1),
  target_data_path: DataPathSchema.optional(),
});

/** `workflow_input`: its name, JSON Schema and defaults. */
export const WorkflowInputSchema = z
  .object({
    /** What references call the input (`{{input.x}}`); the punctuation of references is refused in it. */
    name: referenceNameSchema('the input name'),
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

/** A workflow definition: its steps, the wires between them, its input and its output. */
export const WorkflowSchema = z
  .object({
    name: ResourceNameSchema,
    description: z.string().optional(),
    steps: z.array(StepSchema),
    wires: z.array(WireSchema),
    workflow_input: WorkflowInputSchema.optional(),
    workflow_output: WorkflowOutputSchema.optional(),
    run_as: z
      .literal('service')
      .optional()
      .describe(
        "`service`: the steps read and write as the host's service, not as the run's initiator (storing it needs definitions.write).",
      ),
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
/**
 * A workflow definition as written (before defaults and normalization): what `engine.workflows.create`
 * and `put` take.
 */
export type WorkflowBody = z.input<typeof WorkflowSchema>;
/** The same as {@link WorkflowBody}, under its first name. */
export type WorkflowInputBody = WorkflowBody;
/** A wire between steps. */
export type Wire = z.infer<typeof WireSchema>;
/** `workflow_input`. */
export type WorkflowInput = z.infer<typeof WorkflowInputSchema>;
/** `workflow_output`. */
export type WorkflowOutput = z.infer<typeof WorkflowOutputSchema>;
