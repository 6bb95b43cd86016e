import type { StepOf } from '../../schema/index.js';
import type { StepType } from './types.js';
import { actionKey } from '../../actions/registry.js';
import { StepwireError } from '../../errors/index.js';
import { outputProblem } from '../json-value.js';
import { isThenable } from '../thenable.js';

/** The key of `platform/dummy/dummy_task`, whose output is its input. */
const ECHO_KEY = actionKey('platform', 'dummy', 'dummy_task');

/** An l2 step's action and its key `provider/module/action`, kept on its planned step at its first run. */
interface ActionKey {
  provider: string;
  module: string;
  action: string;
  key: string;
}

/** Outputs of built-in actions whose type is known: action -> output field -> JSON Schema. */
const KNOWN_OUTPUTS: Readonly<Record<string, Readonly<Record<string, Record<string, unknown>>>>> = {
  upload_file: { file_url: { type: 'string' } },
  create_pdf: { pdf_data: { type: 'string' } },
  send_email: { message_id: { type: 'string' } },
};

/** The `l2` step type: runs a registered action with `l2_data.input_data` as its input. @internal */
export const L2_STEP: StepType<StepOf<'l2'>> = {
  plan(step, context) {
    const { provider, module, action } = step.l2_data;
    const known = context.hasAction(provider, module, action);
    return {
      data: { path: 'l2_data.input_data', value: step.l2_data.input_data ?? {} },
      issues: known
        ? []
        : [
            {
              code: 'unknown_action',
              path: 'l2_data',
              message: `step "${step.name}": no action "${provider}/${module}/${action}" is registered`,
            },
          ],
    };
  },

  run(planned, data, context, services) {
    const l2 = planned.step.l2_data;
    const { provider, module, action } = l2;
    let known = planned.typeState as ActionKey | undefined;
    if (known?.provider !== provider || known.module !== module || known.action !== action) {
      known = { provider, module, action, key: actionKey(provider, module, action) };
      planned.typeState = known;
    }
    const output = services.actions.invoke(provider, module, action, data ?? {}, context, known.key);
    // Built-in actions return JSON by construction, except dummy_task, which returns its input: an
    // object its wires placed at several paths is JSON that doubles with each step of a chain. (A
    // small output is counted at once, without the full walk: see `jsonProblem`.)
    if (known.key !== ECHO_KEY && !services.actions.isOwn(known.key)) return output;
    return isThenable(output) ? Promise.resolve(output).then(storable) : storable(output);
  },

  outputSchema(step, path) {
    const field = path.length === 1 ? path[0] : undefined;
    const schema = field === undefined ? undefined : KNOWN_OUTPUTS[step.l2_data.action]?.[field];
    return schema && { ...schema };
  },
};

/**
 * An own action's output, when a run record can hold it; otherwise the step fails with
 * `invalid_output` (never retried: the action would return the same), so `on_error` decides.
 */
function storable(output: unknown): unknown {
  const problem = outputProblem(output);
  if (problem) throw new StepwireError(problem.code, problem.message);
  return output;
}
