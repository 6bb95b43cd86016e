import { RunWorkflowInputSchema } from '../schema/index.js';
import type { ActionDefinition } from './registry.js';

/** Where `run_workflow` is registered: `platform/workflows/run_workflow`. @internal */
export const RUN_WORKFLOW = { provider: 'platform', module: 'workflows', action: 'run_workflow' } as const;

/**
 * `platform/workflows/run_workflow`: runs `workflow_name` with `input` as a child run and outputs the
 * child's output. A child that fails fails the step with the child's error code.
 */
export const runWorkflowAction: ActionDefinition<typeof RunWorkflowInputSchema> = {
  ...RUN_WORKFLOW,
  description: 'Runs another workflow as a child run and returns its output.',
  input: RunWorkflowInputSchema,
  run: (input, context) => context.runWorkflow(input.workflow_name, input.input ?? {}),
};
