// A host process for test/script/isolated-vm.test.ts: it runs a script that never ends in an
// IsolatedVmSandbox, and says so once the sandbox's child process runs it.
import { IsolatedVmSandbox } from '../../src/adapters/node/isolated-vm-sandbox.js';
import { DEFAULT_SCRIPT_LIMITS } from '../../src/script/index.js';

const sandbox = new IsolatedVmSandbox();
void sandbox.run({
  source: 'console.log("started"); while (true) {}',
  inputs: {},
  outputs: [],
  limits: { ...DEFAULT_SCRIPT_LIMITS, timeoutMs: 120_000 },
});
process.stdout.write('running\n');
