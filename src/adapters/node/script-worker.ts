/**
 * Entry of the worker thread behind `WorkerSandbox`: runs each script it is sent in a
 * `QuickJsSandbox` and posts back the result or the error as plain data.
 * @internal
 * @module
 */

import { parentPort } from 'node:worker_threads';
import { toWireError } from '../../script/outcome.js';
import { QuickJsSandbox } from '../../script/quickjs-sandbox.js';
import { DEFAULT_SCRIPT_LIMITS } from '../../script/types.js';
import type { ScriptWorkerReply, ScriptWorkerRequest } from './script-worker-protocol.js';

const port = parentPort;
if (port !== null) {
  const sandbox = new QuickJsSandbox();
  // Load QuickJS before taking work, so the host's kill timer measures only script time.
  void sandbox
    .run({ source: '', inputs: {}, outputs: [], limits: DEFAULT_SCRIPT_LIMITS })
    .finally(() => port.postMessage({ ready: true }));
  port.on('message', (request: ScriptWorkerRequest) => {
    sandbox.run(request.input).then(
      (result) => port.postMessage({ id: request.id, ok: true, result } satisfies ScriptWorkerReply),
      (error: unknown) =>
        port.postMessage({
          id: request.id,
          ok: false,
          error: toWireError(error),
        } satisfies ScriptWorkerReply),
    );
  });
}
