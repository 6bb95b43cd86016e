/**
 * `WorkerSandbox`: the QuickJS script sandbox inside Node worker threads, so a hostile script never
 * blocks the host's event loop and a hard kill timer backs QuickJS's own deadline.
 * @module
 */

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { StepwireError } from '../../errors/index.js';
import { memoryError } from '../../script/outcome.js';
import type { ScriptInput, ScriptResult, ScriptSandbox } from '../../script/types.js';
import { ScriptPool, type ScriptWorker, type WorkerEvents } from './script-pool.js';
import type { ScriptWorkerReply, ScriptWorkerRequest } from './script-worker-protocol.js';

/** Options of {@link WorkerSandbox}. */
export interface WorkerSandboxOptions {
  /** Worker threads kept for runs; runs beyond it wait in line (default 1). */
  poolSize?: number;
  /** Time past the script's `timeoutMs` after which the thread is terminated (default 1000 ms). */
  killGraceMs?: number;
  /** V8 limits of each worker thread (default: 256 MiB old generation, 32 MiB young, 4 MiB stack). */
  resourceLimits?: ResourceLimits;
  /** Location of the worker entry, for bundles that move it (default: `script-worker.js` beside this module). */
  workerUrl?: URL;
}

/** How to start a worker: a file URL, or code evaluated in the thread. */
interface Entry {
  script: URL | string;
  eval: boolean;
}

const DEFAULT_RESOURCE_LIMITS: ResourceLimits = {
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 4,
};

/**
 * Runs transform scripts in `QuickJsSandbox` inside a pool of `node:worker_threads` workers.
 * A run that outlives `timeoutMs + killGraceMs` has its thread terminated and fails with
 * `LimitError('script.timeout')`; an aborted signal terminates it too (`CancelledError`).
 * Each thread has V8 `resourceLimits`, and QuickJS's WebAssembly memory is capped per run.
 * Call {@link WorkerSandbox.close} to end the threads (idle threads never keep the process alive).
 */
export class WorkerSandbox implements ScriptSandbox {
  readonly #pool: ScriptPool;

  constructor(options: WorkerSandboxOptions = {}) {
    const resourceLimits = options.resourceLimits ?? DEFAULT_RESOURCE_LIMITS;
    const entry =
      options.workerUrl === undefined ? defaultEntry() : { script: options.workerUrl, eval: false };
    this.#pool = new ScriptPool({
      name: 'WorkerSandbox',
      poolSize: options.poolSize ?? 1,
      killGraceMs: options.killGraceMs ?? 1000,
      spawn: (events) => spawnThread(entry, resourceLimits, events),
    });
  }

  /** Runs the script in a worker thread; see `ScriptSandbox.run`. */
  run(input: ScriptInput): Promise<ScriptResult> {
    return this.#pool.run(input);
  }

  /** Terminates every worker thread; queued and running runs fail. */
  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** Starts a worker thread running `QuickJsSandbox`. */
function spawnThread(entry: Entry, resourceLimits: ResourceLimits, events: WorkerEvents): ScriptWorker {
  const worker = new Worker(entry.script, {
    eval: entry.eval,
    execArgv: [],
    resourceLimits,
    stdout: false,
    stderr: false,
  });
  worker.on('message', (reply: ScriptWorkerReply) => events.message(reply));
  worker.on('error', (error: Error & { code?: string }) => {
    events.failed((limits) =>
      error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? memoryError(limits)
        : new StepwireError('script_worker_failed', `the script worker failed: ${error.message}`, {
            cause: error,
          }),
    );
  });
  worker.on('exit', (code) => {
    events.failed(
      () => new StepwireError('script_worker_failed', `the script worker exited with code ${code}`),
    );
  });
  return {
    send: (request: ScriptWorkerRequest) => worker.postMessage(request),
    stop: async () => void (await worker.terminate()),
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}

/**
 * `script-worker.js` beside this module. Under the TypeScript sources (tests), a small eval'd
 * bootstrap registers tsx in the thread and imports `script-worker.ts`.
 */
function defaultEntry(): Entry {
  const here = typeof __filename === 'string' ? pathToFileURL(__filename).href : import.meta.url;
  if (!/\.[cm]?ts$/.test(here)) return { script: new URL('./script-worker.js', here), eval: false };
  const worker = new URL('./script-worker.ts', here).href;
  const tsxPackage = pathToFileURL(createRequire(here).resolve('tsx/package.json'));
  const tsxApi = new URL('./dist/esm/api/index.mjs', tsxPackage).href;
  const code = `import(${JSON.stringify(tsxApi)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}); });`;
  return { script: code, eval: true };
}
