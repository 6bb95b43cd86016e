/**
 * The pool behind `WorkerSandbox` and `IsolatedVmSandbox`: runs wait in line for a worker (a thread
 * or a child process), each worker runs one script at a time, and a worker whose run outlives its
 * time limit, is cancelled or breaks is stopped and replaced.
 * @internal
 * @module
 */

import { StepwireError } from '../../errors/index.js';
import { cancelledError, fromWireError, timeoutError } from '../../script/outcome.js';
import type { ScriptInput, ScriptLimits, ScriptResult } from '../../script/types.js';
import type { ScriptWorkerReply, ScriptWorkerRequest } from './script-worker-protocol.js';

/** What a worker tells its pool. @internal */
export interface WorkerEvents {
  /** A reply, or the worker saying it is ready for work. */
  message(reply: ScriptWorkerReply): void;
  /** The worker is gone or broken; `error` names why, for the run it had (when it had one). */
  failed(error: (limits: ScriptLimits) => StepwireError): void;
}

/** One worker, as its pool drives it. @internal */
export interface ScriptWorker {
  /** Sends a run; throws when the input cannot be sent. */
  send(request: ScriptWorkerRequest): void;
  /** Ends the worker; its events stop. */
  stop(): Promise<void>;
  /** Keeps the process alive while the worker runs a script. */
  ref(): void;
  /** Lets the process exit while the worker is idle. */
  unref(): void;
}

/** How a pool is set up. @internal */
export interface ScriptPoolOptions {
  /** The sandbox's name in errors (`the WorkerSandbox is closed`). */
  name: string;
  poolSize: number;
  killGraceMs: number;
  spawn: (events: WorkerEvents) => ScriptWorker;
  /** The request sent for a run (default: the input without its signal); `prepared` as `run` was given it. */
  request?: (id: number, input: Omit<ScriptInput, 'signal'>, prepared: unknown) => ScriptWorkerRequest;
  /** The result of a run from its reply (default: the reply's result). */
  result?: (reply: Extract<ScriptWorkerReply, { ok: true }>, input: ScriptInput) => ScriptResult;
}

interface Job {
  id: number;
  input: ScriptInput;
  prepared: unknown;
  resolve: (result: ScriptResult) => void;
  reject: (error: unknown) => void;
  /** Stops listening for a cancel while the job waits in line; called when it leaves the line. */
  unqueue: () => void;
}

interface Slot {
  worker: ScriptWorker;
  /** Set once the worker has loaded its engine; the kill timer only covers script time. */
  ready: boolean;
  job: (Job & { cleanup: () => void }) | undefined;
}

/** A pool of script workers. @internal */
export class ScriptPool {
  readonly #options: ScriptPoolOptions;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;
  /** Workers that failed before they were ready since one last was. */
  #failedStarts = 0;

  constructor(options: ScriptPoolOptions) {
    this.#options = { ...options, poolSize: Math.max(1, Math.floor(options.poolSize)) };
  }

  /** Runs the script in a worker once one is free; `prepared` goes to the `request` option. */
  run(input: ScriptInput, prepared?: unknown): Promise<ScriptResult> {
    if (this.#closed) return Promise.reject(this.#closedError());
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
        prepared,
        resolve,
        reject,
        unqueue: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /** Stops every worker; queued and running runs fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) {
      job.unqueue();
      job.reject(this.#closedError());
    }
    const slots = [...this.#slots];
    for (const slot of slots) this.#discard(slot, () => this.#closedError());
    await Promise.all(slots.map((slot) => slot.worker.stop()));
  }

  #closedError(): StepwireError {
    return new StepwireError('sandbox_closed', `the ${this.#options.name} is closed`);
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const slots = [...this.#slots];
      const idle = slots.find((slot) => slot.ready && slot.job === undefined);
      if (idle !== undefined) {
        this.#start(idle, this.#queue.shift() as Job);
        continue;
      }
      // Start workers up to the pool size while runs wait; each takes the queue once ready.
      const starting = slots.filter((slot) => !slot.ready).length;
      if (starting >= this.#queue.length || this.#slots.size >= this.#options.poolSize) return;
      this.#spawn();
    }
  }

  #spawn(): void {
    const slot = { ready: false, job: undefined } as unknown as Slot;
    slot.worker = this.#options.spawn({
      message: (reply) => {
        if ('ready' in reply) {
          slot.ready = true;
          this.#failedStarts = 0;
          this.#dispatch();
          // Kept alive while it started for a run; idle, it lets the process exit.
          if (slot.job === undefined) slot.worker.unref();
          return;
        }
        const job = slot.job;
        if (job === undefined || job.id !== reply.id) return;
        if (reply.retire === true) this.#retire(slot);
        else this.#finish(slot);
        if (!reply.ok) job.reject(fromWireError(reply.error));
        else if (this.#options.result === undefined) job.resolve(reply.result);
        else {
          try {
            job.resolve(this.#options.result(reply, job.input));
          } catch (error) {
            job.reject(error);
          }
        }
      },
      failed: (error) => this.#discard(slot, error),
    });
    this.#slots.add(slot);
  }

  #start(slot: Slot, job: Job): void {
    job.unqueue();
    const { signal, ...input } = job.input;
    if (signal?.aborted) {
      job.reject(cancelledError());
      return;
    }
    const killer = setTimeout(() => {
      this.#discard(slot, timeoutError);
    }, job.input.limits.timeoutMs + this.#options.killGraceMs);
    const onAbort = (): void => this.#discard(slot, cancelledError);
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
      slot.worker.send(this.#options.request?.(job.id, input, job.prepared) ?? { id: job.id, input });
    } catch (error) {
      this.#discard(
        slot,
        () =>
          new StepwireError(
            'script_input',
            `the script input cannot be sent to the worker: ${String(error)}`,
          ),
      );
    }
  }

  /** Ends a worker that asked to retire, after its reply: its job is done, another worker takes the next. */
  #retire(slot: Slot): void {
    slot.job?.cleanup();
    slot.job = undefined;
    this.#slots.delete(slot);
    void slot.worker.stop();
    queueMicrotask(() => this.#dispatch());
  }

  /** Marks a slot idle after a reply and runs the next queued job. */
  #finish(slot: Slot): void {
    slot.job?.cleanup();
    slot.job = undefined;
    slot.worker.unref();
    queueMicrotask(() => this.#dispatch());
  }

  /**
   * Removes a slot for good, stopping its worker and failing its job with `error`. When more workers
   * than the pool holds have failed before they were ready, one after the other, the runs waiting
   * fail too: another worker would fail the same way (an entry that does not load).
   */
  #discard(slot: Slot, error: (limits: ScriptLimits) => StepwireError): void {
    if (!this.#slots.delete(slot)) return;
    const job = slot.job;
    slot.job = undefined;
    job?.cleanup();
    void slot.worker.stop();
    job?.reject(error(job.input.limits));
    if (!slot.ready && ++this.#failedStarts > this.#options.poolSize)
      for (const waiting of this.#queue.splice(0)) {
        waiting.unqueue();
        waiting.reject(error(waiting.input.limits));
      }
    if (!this.#closed) queueMicrotask(() => this.#dispatch());
  }
}
