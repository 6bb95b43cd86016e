/**
 * Entry of the child processes behind `IsolatedVmSandbox`: runs each script it is sent in an
 * `IsolateRunner` and sends back the result or the error as plain data.
 * @internal
 * @module
 */

import { toWireError } from '../../script/outcome.js';
import { DEFAULT_SCRIPT_LIMITS } from '../../script/types.js';
import { IsolateRunner } from './isolated-vm-runner.js';
import type { ScriptWorkerReply, ScriptWorkerRequest } from './script-worker-protocol.js';

if (process.send !== undefined) {
  const reply = (message: ScriptWorkerReply): void => void process.send?.(message);
  const runner = new IsolateRunner();
  // Make one isolate before taking work, so the host's kill timer measures only script time.
  void runner
    .run({ source: '', inputs: {}, outputs: [], limits: DEFAULT_SCRIPT_LIMITS })
    .finally(() => reply({ ready: true }));
  process.on('message', (request: ScriptWorkerRequest) => {
    runner.run(request.input, request.encoded).then(
      ({ packed, ...result }) => reply({ id: request.id, ok: true, result, packed }),
      (error: unknown) => reply({ id: request.id, ok: false, error: toWireError(error) }),
    );
  });
  // The host going away ends this process.
  process.on('disconnect', () => process.exit(0));
}
