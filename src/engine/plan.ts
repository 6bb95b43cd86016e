import { issuesUnder, type Issue } from '../errors/index.js';
import { parsePath, type Workflow } from '../schema/index.js';
import { compileValue, parseReference, type Reference } from './references.js';
import { stepRetryPolicy } from '../retry/index.js';
import { stepType } from './steps/index.js';
import type { Plan, PlanContext, PlannedCondition, PlannedStep } from './plan-types.js';

export type { Plan, PlanContext, PlannedCondition, PlannedStep, PlannedWire } from './plan-types.js';

/**
 * Checks a workflow's references, wires and dependencies and plans its order. Pure: no I/O.
 * Every problem names the step and field.
 * @internal
 */
export function planWorkflow(workflow: Workflow, context: PlanContext): { plan: Plan; issues: Issue[] } {
  const issues: Issue[] = [];
  const inputName = workflow.workflow_input?.name ?? 'input';
  const indexOf = new Map(workflow.steps.map((step, index) => [step.name, index]));

  const checkRoot = (ref: Reference, path: string, self: number | undefined, deps: Set<number>) => {
    if (ref.root === inputName) {
      const property = ref.path[0];
      if (context.inputProperties && typeof property === 'string' && !context.inputProperties.has(property)) {
        issues.push({
          code: 'unknown_reference',
          path,
          message: `reference ${ref.text} names "${property}", which is not a property of the input schema (properties: ${[...context.inputProperties].join(', ') || 'none'})`,
        });
      }
      return;
    }
    const target = indexOf.get(ref.root);
    if (target === undefined) {
      issues.push({
        code: 'unknown_reference',
        path,
        message: `reference ${ref.text} names "${ref.root}", which is neither a step nor the input "${inputName}"`,
      });
    } else if (target === self) {
      issues.push({ code: 'cycle', path, message: `reference ${ref.text} refers to its own step` });
    } else {
      deps.add(target);
    }
  };

  const stepDeps: Set<number>[] = [];
  const steps: PlannedStep[] = workflow.steps.map((step, index) => {
    const at = `steps[${index}]`;
    const deps = new Set<number>();
    const typePlan = stepType(step).plan(step, context);
    const field = typePlan.data.path;
    const data = compileValue(
      typePlan.data.value,
      (ref) => checkRoot(ref, `${at}.${field}`, index, deps),
      (message) => issues.push({ code: 'invalid_reference', path: `${at}.${field}`, message }),
    ).resolve;
    issues.push(...issuesUnder(typePlan.issues ?? [], at));
    const conditions: PlannedCondition[] = (step.conditions ?? []).map((condition, c) => {
      const expression = condition.data_path.trim().replace(/^\{\{\s*|\s*\}\}$/g, '');
      const parsed = parseReference(expression, `{{${expression}}}`);
      const path = `${at}.conditions[${c}].data_path`;
      if (typeof parsed === 'string') {
        issues.push({ code: 'invalid_path', path, message: parsed });
        return { reference: { text: expression, root: inputName, path: [] }, value: condition.value };
      }
      checkRoot(parsed, path, index, deps);
      return { reference: parsed, value: condition.value };
    });
    const retry = step.retry && !typePlan.retriesItself ? stepRetryPolicy(step.retry) : undefined;
    stepDeps.push(deps);
    return { index, step, data, wires: [], conditions, dependsOn: [], retry };
  });

  workflow.wires.forEach((wire, w) => {
    const target = indexOf.get(wire.target_name);
    const source = indexOf.get(wire.source_name);
    const sourcePath = parsePath(wire.source_data_path ?? '');
    const targetPath = parsePath(wire.target_data_path ?? '');
    if (
      target === undefined ||
      (source === undefined && wire.source_name !== inputName) ||
      !sourcePath.ok ||
      !targetPath.ok
    )
      return; // reported by the schema
    if (
      wire.source_name === inputName &&
      context.inputProperties &&
      typeof sourcePath.segments[0] === 'string' &&
      !context.inputProperties.has(sourcePath.segments[0])
    ) {
      issues.push({
        code: 'unknown_reference',
        path: `wires[${w}].source_data_path`,
        message: `wire from the input reads "${sourcePath.segments[0]}", which is not a property of the input schema`,
      });
    }
    const planned = steps[target]!;
    if (source !== undefined) stepDeps[target]!.add(source);
    planned.wires.push({
      source: wire.source_name,
      sourcePath: sourcePath.segments,
      targetPath: targetPath.segments,
    });
  });

  steps.forEach((planned, i) => {
    planned.dependsOn = [...stepDeps[i]!].sort((a, b) => a - b);
  });

  const order = orderSteps(steps, workflow, issues);
  const dependents: number[][] = steps.map(() => []);
  for (const planned of steps) for (const d of planned.dependsOn) dependents[d]!.push(planned.index);
  const output = workflow.workflow_output?.output_data;
  const outputResolver =
    output === undefined
      ? undefined
      : compileValue(
          output,
          (ref) => checkRoot(ref, 'workflow_output.output_data', undefined, new Set()),
          (message) =>
            issues.push({ code: 'invalid_reference', path: 'workflow_output.output_data', message }),
        ).resolve;
  return {
    plan: { workflow, inputName, steps, order, output: outputResolver, indexByName: indexOf, dependents },
    issues,
  };
}

/** Kahn's algorithm, always taking the ready step that comes first in the definition. */
function orderSteps(steps: PlannedStep[], workflow: Workflow, issues: Issue[]): number[] {
  const remaining = steps.map((s) => s.dependsOn.length);
  const dependents: number[][] = steps.map(() => []);
  steps.forEach((s) => s.dependsOn.forEach((d) => dependents[d]!.push(s.index)));
  const ready: number[] = [];
  remaining.forEach((count, i) => count === 0 && ready.push(i));
  const order: number[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => a - b);
    const next = ready.shift()!;
    order.push(next);
    for (const d of dependents[next]!) if (--remaining[d]! === 0) ready.push(d);
  }
  if (order.length < steps.length) {
    const stuck = steps.filter((s) => !order.includes(s.index));
    for (const s of stuck) {
      issues.push({
        code: 'cycle',
        path: `steps[${s.index}]`,
        message: `step "${s.step.name}" is part of a cycle: it waits for ${s.dependsOn
          .filter((d) => !order.includes(d))
          .map((d) => `"${workflow.steps[d]!.name}"`)
          .join(', ')}`,
      });
    }
  }
  return order;
}
