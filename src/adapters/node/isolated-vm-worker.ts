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

/**
 * A process grown by this much since it was ready retires after its reply: memory a run made outside
 * V8's heap (ICU's objects) stays with the process, and a new one starts small.
 */
const RETIRE_GROWTH_BYTES = 512 * 1024 * 1024;

if (process.send !== undefined) {
  const reply = (message: ScriptWorkerReply): void => void process.send?.(message);
  const runner = new IsolateRunner();
  let baseline = 0;
  // Make one isolate before taking work, so the host's kill timer measures only script time.
  void runner.run({ source: '', inputs: {}, outputs: [], limits: DEFAULT_SCRIPT_LIMITS }).finally(() => {
    baseline = process.memoryUsage.rss();
    reply({ ready: true });
  });
  const retire = (): boolean => process.memoryUsage.rss() > baseline + RETIRE_GROWTH_BYTES;
  process.on('message', (request: ScriptWorkerRequest) => {
    runner.run(request.input, request.encoded).then(
      ({ packed, ...result }) => reply({ id: request.id, ok: true, result, packed, retire: retire() }),
      (error: unknown) => reply({ id: request.id, ok: false, error: toWireError(error), retire: retire() }),
    );
  });
  // The host going away (or retiring this process) ends it.
  process.on('disconnect', () => process.exit(0));
}
