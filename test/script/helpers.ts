import {
  DEFAULT_SCRIPT_LIMITS,
  type EntityData,
  type ScriptInput,
  type ScriptLimits,
} from '../../src/script/index.js';

export const orders: EntityData = {
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'region', type: 'STRING' },
    { name: 'amount', type: 'NUMBER' },
  ],
  rows: [
    [1, 'eu', 10],
    [2, 'us', 5],
    [3, 'eu', 7],
    [4, 'apac', 1],
  ],
};

/** A run input over `orders` writing `totals`, with short limits so limit tests stay fast. */
export function input(source: string, limits: Partial<ScriptLimits> = {}): ScriptInput {
  return {
    source,
    filename: 'transform.js',
    inputs: { orders },
    outputs: ['totals'],
    limits: { ...DEFAULT_SCRIPT_LIMITS, timeoutMs: 1500, ...limits },
  };
}
