/**
 * Messages between `WorkerSandbox` and its worker threads.
 * @internal
 * @module
 */

import type { WireError } from '../../script/outcome.js';
import type { ScriptInput, ScriptResult } from '../../script/types.js';

/** A run request: the input without its signal (signals cannot cross threads). @internal */
export interface ScriptWorkerRequest {
  id: number;
  input: Omit<ScriptInput, 'signal'>;
}

/** The answer to one request, or the thread saying it is ready for work. @internal */
export type ScriptWorkerReply =
  | { ready: true }
  | { id: number; ok: true; result: ScriptResult }
  | { id: number; ok: false; error: WireError };
