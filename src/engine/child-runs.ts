/**
 * Child runs (`platform/workflows/run_workflow`): how deep runs may nest, and which workflows a
 * definition calls, so that a workflow able to reach itself is refused when it is stored.
 * @module
 */
import { LimitError, StepwireError, type Issue } from '../errors/index.js';
import { RUN_WORKFLOW } from '../actions/run-workflow.js';
import { findReferences, type Workflow } from '../schema/index.js';
import { parsePath } from '../schema/path.js';
import type { RunRecord } from './record.js';

/** Deepest nesting of child runs: a run started directly is at depth 0, its children at depth 1. */
export const MAX_RUN_DEPTH = 8;

/** Where a child run comes from: its parent run and the workflows from the top run down to it. @internal */
export interface RunLineage {
  parentId: string;
  chain: readonly string[];
}

/** What {@link childChain} says, found inside the messages that wrap it. */
const DEPTH_MESSAGE = /workflow "[^"]*" would run at depth \d+, deeper than \d+: .*$/s;

/**
 * The chain of a child run of `name` started by a run whose chain is `chain`.
 * @throws {@link LimitError} naming the chain when the child would be deeper than {@link MAX_RUN_DEPTH}.
 * @internal
 */
export function childChain(chain: readonly string[], name: string): readonly string[] {
  const next = [...chain, name];
  if (next.length - 1 > MAX_RUN_DEPTH)
    throw new LimitError(
      'run_depth',
      `workflow "${name}" would run at depth ${next.length - 1}, deeper than ${MAX_RUN_DEPTH}: ${next.join(' -> ')}`,
    );
  return next;
}

/**
 * The error of a child run that did not succeed, with the child's code. A depth limit met further
 * down is told once, the chain it names saying the way there, not wrapped in one sentence per
 * ancestor. @internal
 */
export function childFailure(record: RunRecord): StepwireError {
  const message = record.error?.message ?? 'no reason given';
  const depth = record.error?.code === 'limit_exceeded' ? DEPTH_MESSAGE.exec(message) : null;
  const reason = depth ? depth[0] : message;
  return new StepwireError(
    record.error?.code ?? 'step_failed',
    `child run ${record.id} of workflow "${record.workflow}" ${record.status}: ${reason}`,
  );
}

/**
 * The workflows a definition runs by a literal `workflow_name` that no wire may replace, with the
 * path of each. @internal
 */
export function calledWorkflows(workflow: Workflow): { name: string; path: string }[] {
  const calls: { name: string; path: string }[] = [];
  // A wire into a step's root or its `workflow_name` may set the name at run time (wired values win):
  // like a reference, that name is not known before the run.
  const wired = new Set(
    workflow.wires.filter((wire) => mayWireName(wire.target_data_path)).map((wire) => wire.target_name),
  );
  workflow.steps.forEach((step, index) => {
    if (step.type !== 'l2' || wired.has(step.name)) return;
    const { provider, module, action, input_data } = step.l2_data;
    if (
      provider !== RUN_WORKFLOW.provider ||
      module !== RUN_WORKFLOW.module ||
      action !== RUN_WORKFLOW.action
    )
      return;
    const name = input_data?.['workflow_name'];
    if (typeof name === 'string' && findReferences(name).length === 0)
      calls.push({ name, path: `steps[${index}].l2_data.input_data.workflow_name` });
  });
  return calls;
}

function mayWireName(path: string | undefined): boolean {
  if (path === undefined) return true;
  const parsed = parsePath(path);
  return parsed.ok && (parsed.segments.length === 0 || parsed.segments[0] === 'workflow_name');
}

/** The issues of `run_workflow` steps that run their own workflow. Pure: no I/O. @internal */
export function selfCallIssues(workflow: Workflow): Issue[] {
  return calledWorkflows(workflow)
    .filter((call) => call.name === workflow.name)
    .map((call) => ({
      code: 'cycle',
      path: call.path,
      message: `workflow "${workflow.name}" runs itself: ${workflow.name} -> ${workflow.name}`,
    }));
}

/**
 * The issues of a workflow that can reach itself through other workflows by `run_workflow` steps
 * with a literal `workflow_name`; `load` gives the stored definitions. A step running its own
 * workflow is left to {@link selfCallIssues}.
 * @internal
 */
export async function selfReachIssues(
  workflow: Workflow,
  load: (name: string) => Promise<Workflow | undefined>,
): Promise<Issue[]> {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  const reach = async (name: string, chain: string[]): Promise<string[] | undefined> => {
    if (name === workflow.name) return chain;
    if (seen.has(name)) return undefined;
    seen.add(name);
    const called = await load(name);
    for (const call of called ? calledWorkflows(called) : []) {
      const found = await reach(call.name, [...chain, call.name]);
      if (found) return found;
    }
    return undefined;
  };
  for (const call of calledWorkflows(workflow)) {
    if (call.name === workflow.name) continue;
    const cycle = await reach(call.name, [workflow.name, call.name]);
    if (cycle)
      issues.push({
        code: 'cycle',
        path: call.path,
        message: `workflow "${workflow.name}" can reach itself: ${cycle.join(' -> ')}`,
      });
  }
  return issues;
}
