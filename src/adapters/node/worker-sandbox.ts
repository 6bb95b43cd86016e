/**
 * `WorkerSandbox`: the QuickJS script sandbox inside Node worker threads, so a hostile script never
 * blocks the host's event loop and a hard kill timer backs QuickJS's own deadline.
 * @module
 */

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { LimitError, StepwireError } from '../../errors/index.js';
import { cancelledError, fromWireError, memoryError, timeoutError } from '../../script/outcome.js';
import type { ScriptInput, ScriptResult, ScriptSandbox } from '../../script/types.js';
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

interface Job {
  id: number;
  input: ScriptInput;
  resolve: (result: ScriptResult) => void;
  reject: (error: unknown) => void;
  /** Stops listening for a cancel while the job waits in line; called when it leaves the line. */
  unqueue: () => void;
}

interface Slot {
  worker: Worker;
  /** Set once the thread has loaded QuickJS; the kill timer only covers script time. */
  ready: boolean;
  job: (Job & { cleanup: () => void }) | undefined;
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
  readonly #poolSize: number;
  readonly #killGraceMs: number;
  readonly #resourceLimits: ResourceLimits;
  readonly #entry: Entry;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: WorkerSandboxOptions = {}) {
    this.#poolSize = Math.max(1, Math.floor(options.poolSize ?? 1));
    this.#killGraceMs = options.killGraceMs ?? 1000;
    this.#resourceLimits = options.resourceLimits ?? DEFAULT_RESOURCE_LIMITS;
    this.#entry =
      options.workerUrl === undefined ? defaultEntry() : { script: options.workerUrl, eval: false };
  }

  /** Runs the script in a worker thread; see `ScriptSandbox.run`. */
  run(input: ScriptInput): Promise<ScriptResult> {
    if (this.#closed)
      return Promise.reject(new StepwireError('sandbox_closed', 'the WorkerSandbox is closed'));
    if (input.signal?.aborted) return Promise.reject(cancelledError());
    const { signal } = input;
    return new Promise<ScriptResult>((resolve, reject) => {
      // A job cancelled while it waits in line leaves the line at once and never runs.
      const onAbort = (): void => {
        const at = this.#queue.indexOf(job);
        if (at === -1) return;
        this.#queue.splice(at, 1);
        reject(cancelledError());
      };
      const job: Job = {
        id: this.#nextId++,
        input,
        resolve,
        reject,
        unqueue: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /** Terminates every worker thread; queued and running runs fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) {
      job.unqueue();
      job.reject(new StepwireError('sandbox_closed', 'the WorkerSandbox is closed'));
    }
    const slots = [...this.#slots];
    for (const slot of slots)
      this.#discard(slot, new StepwireError('sandbox_closed', 'the WorkerSandbox is closed'));
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const slots = [...this.#slots];
      const idle = slots.find((slot) => slot.ready && slot.job === undefined);
      if (idle !== undefined) {
        this.#start(idle, this.#queue.shift() as Job);
        continue;
      }
      // Start threads up to the pool size while runs wait; each takes the queue once ready.
      const starting = slots.filter((slot) => !slot.ready).length;
      if (starting >= this.#queue.length || this.#slots.size >= this.#poolSize) return;
      this.#spawn();
    }
  }

  #spawn(): Slot {
    const worker = new Worker(this.#entry.script, {
      eval: this.#entry.eval,
      execArgv: [],
      resourceLimits: this.#resourceLimits,
      stdout: false,
      stderr: false,
    });
    const slot: Slot = { worker, ready: false, job: undefined };
    worker.unref();
    worker.on('message', (reply: ScriptWorkerReply) => {
      if ('ready' in reply) {
        slot.ready = true;
        this.#dispatch();
        return;
      }
      const job = slot.job;
      if (job === undefined || job.id !== reply.id) return;
      this.#finish(slot);
      if (reply.ok) job.resolve(reply.result);
      else job.reject(fromWireError(reply.error));
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const job = slot.job;
      const failure =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY' && job !== undefined
          ? memoryError(job.input.limits)
          : new StepwireError('script_worker_failed', `the script worker failed: ${error.message}`, {
              cause: error,
            });
      this.#discard(slot, failure);
    });
    worker.on('exit', (code) => {
      this.#discard(
        slot,
        new StepwireError('script_worker_failed', `the script worker exited with code ${code}`),
      );
    });
    this.#slots.add(slot);
    return slot;
  }

  #start(slot: Slot, job: Job): void {
    job.unqueue();
    const { signal, ...input } = job.input;
    if (signal?.aborted) {
      job.reject(cancelledError());
      return;
    }
    const killer = setTimeout(() => {
      this.#discard(slot, timeoutError(job.input.limits));
    }, job.input.limits.timeoutMs + this.#killGraceMs);
    const onAbort = (): void => this.#discard(slot, cancelledError());
    signal?.addEventListener('abort', onAbort, { once: true });
    slot.job = {
      ...job,
      cleanup: () => {
        clearTimeout(killer);
        signal?.removeEventListener('abort', onAbort);
      },
    };
    slot.worker.ref();
    try {
      slot.worker.postMessage({ id: job.id, input } satisfies ScriptWorkerRequest);
    } catch (error) {
      this.#discard(
        slot,
        new StepwireError('script_input', `the script input cannot be sent to the worker: ${String(error)}`),
      );
    }
  }

  /** Marks a slot idle after a reply and runs the next queued job. */
  #finish(slot: Slot): void {
    slot.job?.cleanup();
    slot.job = undefined;
    slot.worker.unref();
    queueMicrotask(() => this.#dispatch());
  }

  /** Removes a slot for good, terminating its thread and failing its job with `error`. */
  #discard(slot: Slot, error: StepwireError | LimitError): void {
    if (!this.#slots.delete(slot)) return;
    const job = slot.job;
    slot.job = undefined;
    job?.cleanup();
    void slot.worker.terminate();
    job?.reject(error);
    if (!this.#closed) queueMicrotask(() => this.#dispatch());
  }
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
