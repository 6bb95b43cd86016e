/**
 * Messages between `WorkerSandbox` and its worker threads.
 * @internal
 * @module
 */

import type { PackedWrite } from '../../script/host-functions.js';
import type { PreEncodedEntity } from '../../script/marshal.js';
import type { WireError } from '../../script/outcome.js';
import type { ScriptInput, ScriptResult } from '../../script/types.js';

/** A run request: the input without its signal (signals cannot cross threads). @internal */
export interface ScriptWorkerRequest {
  id: number;
  input: Omit<ScriptInput, 'signal'>;
  /**
   * The inputs encoded by column, for a worker in another process (`input.inputs` then holds only
   * their columns); its reply then carries the writes as packed.
   */
  encoded?: Record<string, PreEncodedEntity>;
}

/**
 * The answer to one request, or the worker saying it is ready for work. With `retire`, the worker
 * takes no more work and ends (its process holds memory a run left). @internal
 */
export type ScriptWorkerReply =
  | { ready: true }
  | { id: number; ok: true; result: ScriptResult; packed?: PackedWrite[] | undefined; retire?: boolean }
  | { id: number; ok: false; error: WireError; retire?: boolean };
