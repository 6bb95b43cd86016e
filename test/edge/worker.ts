// The worker run by test/edge/workerd.test.ts: the stepwire engine and its HTTP handler inside workerd.
// Workers cannot compile WebAssembly from bytes, so QuickJS's .wasm is a module import: the test's
// bundler leaves this import external and hands the file to workerd as a compiled Wasm module.
import quickjsWasm from '@jitl/quickjs-wasmfile-release-sync/wasm';
import { Engine, MemorySpreadsheets, QuickJsSandbox } from '../../src/index.js';
import { createHandler, type FetchHandler } from '../../src/http/index.js';
import { SHOP } from './scenario.js';

let handler: FetchHandler | undefined;
/** Under `/__bare`: an engine left with the default sandbox, which cannot load its .wasm here. */
let bare: FetchHandler | undefined;

function build(): FetchHandler {
  const spreadsheets = new MemorySpreadsheets(SHOP);
  const sandbox = new QuickJsSandbox({ wasmModule: quickjsWasm });
  return createHandler(new Engine({ spreadsheets, sandbox }));
}

export default {
  // The engine is built on the first request: workerd forbids some work (timers, randomness) at startup.
  fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname.startsWith('/__bare/')) {
      bare ??= createHandler(new Engine({ spreadsheets: new MemorySpreadsheets(SHOP) }), {
        basePath: '/__bare',
      });
      return bare(request);
    }
    handler ??= build();
    return handler(request);
  },
};
