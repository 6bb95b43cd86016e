import type { Step, StepOf, StepTypeName } from '../../schema/index.js';
import { ATLAS_STEP } from './atlas.js';
import { L2_STEP } from './l2.js';
import { REQUEST_STEP } from './request.js';
import { WAIT_STEP } from './wait.js';
import type { StepType } from './types.js';

export type { StepPlan, StepType } from './types.js';

/**
 * Every step type by name. Adding a step type is one entry here (and its schema in src/schema/steps);
 * the type checker asks for one entry per schema variant.
 */
const STEP_TYPE_TABLE: { readonly [T in StepTypeName]: StepType<StepOf<T>> } = {
  l2: L2_STEP,
  atlas: ATLAS_STEP,
  request: REQUEST_STEP,
  wait: WAIT_STEP,
};

/** The step type of a step: how it is planned and run. @internal */
export function stepType<S extends Step>(step: S): StepType<S> {
  // The table is keyed by `type`, so the entry found takes exactly this kind of step.
  return STEP_TYPE_TABLE[step.type] as unknown as StepType<S>;
}
