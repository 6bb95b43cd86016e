/**
 * The `--sandbox` option of `run`, `serve` and `worker`: which sandbox runs the project's scripts.
 * @internal
 * @module
 */

import { IsolatedVmSandbox } from '../adapters/node/isolated-vm-sandbox.js';
import { WorkerSandbox } from '../adapters/node/worker-sandbox.js';
import type { ScriptSandbox } from '../script/types.js';
import { UsageError } from './io.js';

/**
 * The sandbox `--sandbox` names: `quickjs` (default) or `isolated-vm`. Throws `UsageError` for any
 * other name, and `StepwireError` `sandbox_unavailable` when isolated-vm is not installed.
 * @internal
 */
export function openSandbox(value: unknown, command: string): ScriptSandbox & { close(): Promise<void> } {
  if (value === undefined || value === 'quickjs') return new WorkerSandbox();
  if (value === 'isolated-vm') return new IsolatedVmSandbox();
  throw new UsageError(`--sandbox must be "quickjs" or "isolated-vm", got "${String(value)}"`, command);
}
