import { issuesUnder, type Issue } from '../errors/index.js';
import { parsePath, type PathSegment, type Workflow } from '../schema/index.js';
import { unbraced } from '../schema/path.js';
import { ORDER_WIRE_TARGET, addDataOrder } from '../schema/data-order.js';
import { compileValue, parseReference, type Reference } from './references.js';
import { stepRetryPolicy } from '../retry/index.js';
import { stepType } from './steps/index.js';
import { ITEM_INDEX_ROOT, ITEM_ROOT, forEachPathProblem, isItemRoot } from './for-each-shape.js';
import { compileCondition } from '../computed/condition.js';
import type { Plan, PlanContext, PlannedCondition, PlannedForEach, PlannedStep } from './plan-types.js';
import { SECRETS_ROOT, secretReferenceProblem } from './secrets.js';

export type {
  Plan,
  PlanContext,
  PlannedCondition,
  PlannedForEach,
  PlannedStep,
  PlannedWire,
} from './plan-types.js';

/**
 * Checks a workflow's references, wires and dependencies and plans its order. Pure: no I/O.
 * Every problem names the step and field.
 * @internal
 */
export function planWorkflow(workflow: Workflow, context: PlanContext): { plan: Plan; issues: Issue[] } {
  const issues: Issue[] = [];
  const inputName = workflow.workflow_input?.name ?? 'input';
  const inputSchema = workflow.workflow_input?.input_schema;
  const indexOf = new Map(workflow.steps.map((step, index) => [step.name, index]));
  if (inputName === SECRETS_ROOT)
    issues.push({ code: 'reserved_name', path: 'workflow_input.name', message: RESERVED });

  /**
   * Checks a reference's root and records the step it waits for. Returns true when it names the
   * current item, which only the data and conditions of a `for_each` step (`inItem`) may do; there
   * `item` and `item_index` name the item even when a step or the input has that name.
   */
  /**
   * A condition written as an expression: the roots it may read are the input, the steps and, in a
   * `for_each` step, the item; each one it reads is checked (and waited for) as a reference is.
   */
  const planExpressionCondition = (
    source: string,
    path: string,
    check: (ref: Reference, path: string) => boolean,
  ): { condition: PlannedCondition; perItem: boolean } | undefined => {
    const roots = [inputName, ...indexOf.keys(), ITEM_ROOT, ITEM_INDEX_ROOT];
    const compiled = compileCondition(source, roots, path);
    if (!compiled.ok) {
      issues.push(...compiled.issues);
      return undefined;
    }
    let perItem = false;
    const references = compiled.condition.roots.map((root) => {
      const ref = parseReference(root, `{{${root}}}`) as Reference;
      if (check(ref, path)) perItem = true;
      return ref;
    });
    const reference = references[0] ?? { text: '', root: inputName, path: [] };
    return {
      condition: { reference, value: undefined, expression: compiled.condition, references },
      perItem,
    };
  };

  const checkRoot = (
    ref: Reference,
    path: string,
    self: number | undefined,
    deps: Set<number>,
    inItem = false,
    secrets?: Set<string>,
  ): boolean => {
    if (ref.root === SECRETS_ROOT) {
      // Only a step's data, resolved as its attempt starts, may hold a secret: a condition, a list
      // or the workflow's output would keep or show its value.
      const problem = secrets
        ? secretReferenceProblem(ref)
        : `reference ${ref.text}: a secret resolves only in a step's data`;
      if (problem) issues.push({ code: 'invalid_reference', path, message: problem });
      else secrets!.add(ref.path[0] as string);
      return false;
    }
    if (isItemRoot(ref.root) && (inItem || (!indexOf.has(ref.root) && ref.root !== inputName))) {
      if (!inItem)
        issues.push({
          code: 'invalid_reference',
          path,
          message: `reference ${ref.text} names the current item, which only the data and conditions of a for_each step have`,
        });
      else if (ref.root === ITEM_INDEX_ROOT && ref.path.length > 0)
        issues.push({
          code: 'invalid_reference',
          path,
          message: `reference ${ref.text}: item_index is a number and has no fields`,
        });
      return true;
    }
    if (ref.root === inputName) {
      ref.declared = declaredDepth(inputSchema, ref.path);
      const property = ref.path[0];
      if (context.inputProperties && typeof property === 'string' && !context.inputProperties.has(property)) {
        issues.push({
          code: 'unknown_reference',
          path,
          message: `reference ${ref.text} names "${property}", which is not a property of the input schema (properties: ${[...context.inputProperties].join(', ') || 'none'})`,
        });
      }
      return false;
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
      ref.step = target;
      deps.add(target);
      checkShape(target, ref.path, path, `reference ${ref.text}`);
    }
    return false;
  };

  /** A path into a `for_each` step's output must fit `{ items, succeeded, failed, skipped }`. */
  const checkShape = (target: number, refPath: readonly PathSegment[], path: string, what: string) => {
    const source = workflow.steps[target]!;
    if (source.for_each === undefined) return;
    const problem = forEachPathProblem(refPath, source.on_error);
    if (problem)
      issues.push({
        code: 'invalid_reference',
        path,
        message: `${what} does not fit the output of for_each step "${source.name}": ${problem}`,
      });
  };

  /** The `for_each` of a step: its list's reference (which may not name the item) and concurrency. */
  const planForEach = (
    step: Workflow['steps'][number],
    at: string,
    conditions: PlannedCondition[],
    onReference: (ref: Reference) => void,
  ): PlannedForEach | undefined => {
    if (step.for_each === undefined) {
      if (step.concurrency !== undefined)
        issues.push({
          code: 'invalid',
          path: `${at}.concurrency`,
          message: `step "${step.name}": concurrency applies only to a for_each step`,
        });
      return undefined;
    }
    let reference: Reference | undefined;
    const list = compileValue(
      step.for_each,
      (ref) => {
        reference = ref;
        onReference(ref);
      },
      (message) => issues.push({ code: 'invalid_reference', path: `${at}.for_each`, message }),
    ).resolve;
    // A for_each that is not one reference is reported by the schema.
    return reference && { list, reference, concurrency: step.concurrency ?? 1, conditions };
  };

  const stepDeps: Set<number>[] = [];
  const steps: PlannedStep[] = workflow.steps.map((step, index) => {
    const at = `steps[${index}]`;
    const deps = new Set<number>();
    const inItem = step.for_each !== undefined;
    const typePlan = stepType(step).plan(step, context);
    const field = typePlan.data.path;
    const secrets = new Set<string>();
    if (step.name === SECRETS_ROOT)
      issues.push({ code: 'reserved_name', path: `${at}.name`, message: RESERVED });
    const data = compileValue(
      typePlan.data.value,
      (ref) => checkRoot(ref, `${at}.${field}`, index, deps, inItem, secrets),
      (message) => issues.push({ code: 'invalid_reference', path: `${at}.${field}`, message }),
    ).resolve;
    issues.push(...issuesUnder(typePlan.issues ?? [], at));
    const conditions: PlannedCondition[] = [];
    const itemConditions: PlannedCondition[] = [];
    (step.conditions ?? []).forEach((condition, c) => {
      if ('expression' in condition) {
        const planned = planExpressionCondition(
          condition.expression,
          `${at}.conditions[${c}].expression`,
          (ref, path) => checkRoot(ref, path, index, deps, inItem),
        );
        if (planned) (planned.perItem ? itemConditions : conditions).push(planned.condition);
        return;
      }
      const expression = unbraced(condition.data_path);
      const parsed = parseReference(expression, `{{${expression}}}`);
      const path = `${at}.conditions[${c}].data_path`;
      if (typeof parsed === 'string') {
        issues.push({ code: 'invalid_path', path, message: parsed });
        return;
      }
      const perItem = checkRoot(parsed, path, index, deps, inItem);
      (perItem ? itemConditions : conditions).push({ reference: parsed, value: condition.value });
    });
    const retry = step.retry && !typePlan.retriesItself ? stepRetryPolicy(step.retry) : undefined;
    const forEach = planForEach(step, at, itemConditions, (ref) =>
      checkRoot(ref, `${at}.for_each`, index, deps),
    );
    stepDeps.push(deps);
    return {
      index,
      step,
      data,
      wires: [],
      conditions,
      dependsOn: [],
      retry,
      retriesItself: typePlan.retriesItself === true,
      forEach,
      onError: step.on_error ?? 'fail',
      secrets: secrets.size === 0 ? undefined : [...secrets],
      typeState: undefined,
    };
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
    // The order wire (`target_data_path: "after"`) moves no data: the target waits for the source.
    if (wire.target_data_path?.trim() === ORDER_WIRE_TARGET) {
      if (source !== undefined) stepDeps[target]!.add(source);
      return;
    }
    if (source !== undefined) {
      stepDeps[target]!.add(source);
      checkShape(
        source,
        sourcePath.segments,
        `wires[${w}].source_data_path`,
        `wire from "${wire.source_name}"`,
      );
    }
    planned.wires.push({
      source: wire.source_name,
      sourcePath: sourcePath.segments,
      targetPath: targetPath.segments,
      declared: source === undefined ? declaredDepth(inputSchema, sourcePath.segments) : 0,
    });
  });

  // Data order: a read of an entity waits for the writes of it listed before it.
  addDataOrder(workflow.steps, stepDeps);
  steps.forEach((planned, i) => {
    planned.dependsOn = [...stepDeps[i]!].sort((a, b) => a - b);
    // Most steps have no wires and no conditions: they share one empty list, which a long run
    // keeps at hand, rather than each reading its own.
    if (planned.wires.length === 0) planned.wires = NONE;
    if (planned.conditions.length === 0) planned.conditions = NONE;
  });

  const order = orderSteps(steps, workflow, issues);
  const dependents: number[][] = steps.map(() => []);
  for (const planned of steps) for (const d of planned.dependsOn) dependents[d]!.push(planned.index);
  const waitersFrom = new Int32Array(steps.length + 1);
  dependents.forEach((after, i) => (waitersFrom[i + 1] = waitersFrom[i]! + after.length));
  const waiters = Int32Array.from(dependents.flat());
  const waitCounts = Int32Array.from(steps, (planned) => planned.dependsOn.length);
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
    plan: {
      workflow,
      inputName,
      steps,
      order,
      output: outputResolver,
      indexByName: indexOf,
      dependents,
      waiters,
      waitersFrom,
      waitCounts,
    },
    issues,
  };
}

/**
 * How many leading segments of a path into the input the input schema declares: the first a
 * property of `input_schema.properties`, each next one a property of the `properties` of the one
 * before. Only `properties` are followed (not `$ref`, `allOf`, `items` and the like).
 */
function declaredDepth(schema: unknown, path: readonly PathSegment[]): number {
  let depth = 0;
  let current = schema;
  for (const segment of path) {
    if (typeof segment !== 'string' || typeof current !== 'object' || current === null) break;
    const properties = (current as Record<string, unknown>)['properties'];
    if (typeof properties !== 'object' || properties === null || !Object.hasOwn(properties, segment)) break;
    current = (properties as Record<string, unknown>)[segment];
    depth += 1;
  }
  return depth;
}

/** Why neither a step nor the input may be named `secrets`. */
const RESERVED = `"${SECRETS_ROOT}" is reserved: {{${SECRETS_ROOT}.NAME}} names a secret, so no step and no workflow input may be named "${SECRETS_ROOT}"`;

/** The empty list of wires or conditions that steps without any share (frozen: none is added later). */
const NONE = Object.freeze([]) as unknown as never[];

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
