import { afterAll } from 'vitest';
import { IsolatedVmSandbox } from '../../src/adapters/node/isolated-vm-sandbox.js';
import { WorkerSandbox } from '../../src/adapters/node/worker-sandbox.js';
import {
  DEFAULT_SCRIPT_LIMITS,
  QuickJsSandbox,
  type EntityData,
  type ScriptInput,
  type ScriptLimits,
  type ScriptSandbox,
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

/**
 * The two sandboxes every sandbox test runs against, by name, for `describe.each`: QuickJS on this
 * thread and in a worker. The worker is closed after the file's tests.
 */
export function bothSandboxes(): [string, ScriptSandbox][] {
  const workerSandbox = new WorkerSandbox();
  const isolatedVmSandbox = new IsolatedVmSandbox();
  afterAll(() => Promise.all([workerSandbox.close(), isolatedVmSandbox.close()]));
  return [
    ['QuickJsSandbox', new QuickJsSandbox()],
    ['WorkerSandbox', workerSandbox],
    ['IsolatedVmSandbox', isolatedVmSandbox],
  ];
}

/** The error a promise rejects with; fails the test when it resolves. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the run to fail');
}
