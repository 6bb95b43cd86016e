/**
 * `IsolatedVmSandbox`: transform scripts in V8 isolates (the `isolated-vm` package), inside child
 * processes, for scripts that must run at V8's speed.
 * @module
 */

import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StepwireError } from '../../errors/index.js';
import { setOwn } from '../../schema/own.js';
import { unpackWrites } from '../../script/host-functions.js';
import { ColumnKind, preEncode, type PreEncodedEntity } from '../../script/marshal.js';
import { memoryError } from '../../script/outcome.js';
import type { EntityData, ScriptInput, ScriptResult, ScriptSandbox } from '../../script/types.js';
import { ScriptPool, type ScriptWorker, type WorkerEvents } from './script-pool.js';
import type { ScriptWorkerReply, ScriptWorkerRequest } from './script-worker-protocol.js';

/** Options of {@link IsolatedVmSandbox}. */
export interface IsolatedVmSandboxOptions {
  /** Child processes kept for runs; runs beyond it wait in line (default 1). */
  poolSize?: number;
  /** Time past the script's `timeoutMs` after which its process is killed (default 1000 ms). */
  killGraceMs?: number;
  /** Location of the child's entry, for bundles that move it (default: `isolated-vm-worker.js` beside this module). */
  workerUrl?: URL;
}

/** The last bytes of a child's error output kept, to tell a crash for want of memory. */
const STDERR_KEPT = 8192;
/** What V8 prints when it ends the process for want of memory. */
const OUT_OF_MEMORY = /out of memory|is_heap_oom = 1|Reached heap limit/i;

/**
 * Runs transform scripts in V8 isolates of the `isolated-vm` package (an optional peer dependency:
 * `npm install isolated-vm`; Node only), at V8's speed: a transform over 100,000 rows runs several
 * times faster than in `QuickJsSandbox`, with the same `getEntity`, `writeEntity` and `console`.
 * Each run gets an isolate of its own, thrown away after it, with no `WebAssembly` and plain
 * (neither resizable nor growable) buffers, whose memory the isolate's limit would not count.
 *
 * The isolates live in child processes started with `--no-node-snapshot` (isolated-vm needs it),
 * each running one script at a time: a script that makes V8 give up its process (some allocations
 * past the memory limit do) ends only that process, and the run fails with `script.memory`. A run
 * past `timeoutMs + killGraceMs`, or cancelled, has its process killed; the next run starts another.
 * A process that grew by 512 MiB since it started retires after its run.
 *
 * Limits: `timeoutMs` as V8's termination of the script (promise jobs included); `memoryBytes` as
 * the isolate's heap limit, in whole MiB, at least 8 MiB, and the process's own memory as a backstop:
 * a run whose process grows past `memoryBytes` + 256 MiB fails with `script.memory`; `stackBytes`
 * is not adjustable: V8's own stack (about 1 MiB) applies. `maxOutputBytes` and `maxLogBytes` as in
 * `QuickJsSandbox`. Call {@link IsolatedVmSandbox.close} to end the processes (idle ones never keep
 * the host alive).
 *
 * @example
 * ```ts
 * import { Engine } from 'stepwire';
 * import { IsolatedVmSandbox } from 'stepwire/node';
 *
 * const sandbox = new IsolatedVmSandbox();
 * const engine = new Engine({ sandbox });
 * // ... and when the engine is done: await sandbox.close();
 * ```
 */
export class IsolatedVmSandbox implements ScriptSandbox {
  readonly #pool: ScriptPool;

  /** Throws `StepwireError` `sandbox_unavailable` when the package isolated-vm is not installed. */
  constructor(options: IsolatedVmSandboxOptions = {}) {
    const here = moduleUrl();
    try {
      createRequire(here).resolve('isolated-vm');
    } catch (error) {
      throw new StepwireError(
        'sandbox_unavailable',
        'IsolatedVmSandbox needs the package isolated-vm (npm install isolated-vm)',
        { cause: error },
      );
    }
    const entry =
      options.workerUrl === undefined ? defaultEntry(here) : { script: options.workerUrl, loader: [] };
    this.#pool = new ScriptPool({
      name: 'IsolatedVmSandbox',
      poolSize: options.poolSize ?? 1,
      killGraceMs: options.killGraceMs ?? 1000,
      spawn: (events) => spawnProcess(entry, events),
      // Inputs go encoded by column and writes come back packed: copying binary columns between
      // processes costs a fraction of copying row objects.
      request: (id, input, encoded) => ({
        id,
        input: {
          ...input,
          inputs: Object.fromEntries(
            Object.entries(input.inputs).map(([name, entity]) => [
              name,
              { columns: entity.columns, rows: [] },
            ]),
          ),
        },
        encoded: encoded as Record<string, PreEncodedEntity>,
      }),
      result: (reply, input) =>
        reply.packed === undefined
          ? reply.result
          : { writes: unpackWrites(input.outputs, reply.packed), logs: reply.result.logs },
    });
  }

  /** Runs the script in a child process; see `ScriptSandbox.run`. */
  async run(input: ScriptInput): Promise<ScriptResult> {
    // Encoded here, so an input that cannot be copied fails the run alone, before any process.
    const encoded: Record<string, PreEncodedEntity> = {};
    for (const [name, entity] of Object.entries(input.inputs))
      setOwn(encoded, name, encodeInput(name, entity));
    return this.#pool.run(input, encoded);
  }

  /** Ends every child process; queued and running runs fail with `sandbox_closed`. */
  close(): Promise<void> {
    return this.#pool.close();
  }
}

/**
 * An input entity encoded to cross to the child: values only JSON can carry (a `VALUES` column) as
 * the JSON the guest would get, as `QuickJsSandbox` gives them (a function or a symbol is `null`).
 */
function encodeInput(name: string, entity: EntityData): PreEncodedEntity {
  try {
    const encoded = preEncode(entity);
    // New column objects: the catalog's tables keep their encodings for later runs.
    encoded.encoded = encoded.encoded.map((column) =>
      column.kind === ColumnKind.VALUES
        ? { ...column, extra: JSON.parse(JSON.stringify(column.extra)) as unknown }
        : column,
    );
    return encoded;
  } catch (error) {
    throw new StepwireError(
      'script_input',
      `input entity "${name}" cannot be copied into the script as JSON: ${String(error)}`,
      { cause: error },
    );
  }
}

/** The child's entry and the `--import` arguments it needs. */
interface Entry {
  script: URL;
  loader: string[];
}

function moduleUrl(): string {
  return typeof __filename === 'string' ? pathToFileURL(__filename).href : import.meta.url;
}

/** `isolated-vm-worker.js` beside this module; under the TypeScript sources (tests), the `.ts` file through tsx. */
function defaultEntry(here: string): Entry {
  if (!/\.[cm]?ts$/.test(here)) return { script: new URL('./isolated-vm-worker.js', here), loader: [] };
  const tsxPackage = pathToFileURL(createRequire(here).resolve('tsx/package.json'));
  return {
    script: new URL('./isolated-vm-worker.ts', here),
    loader: ['--import', new URL('./dist/esm/index.mjs', tsxPackage).href],
  };
}

/** Starts a child process running isolates. */
function spawnProcess(entry: Entry, events: WorkerEvents): ScriptWorker {
  const child = fork(fileURLToPath(entry.script), [], {
    execArgv: ['--no-node-snapshot', ...entry.loader],
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEPT);
  });
  child.on('message', (reply: ScriptWorkerReply) => events.message(reply));
  child.on('error', (error) => {
    events.failed(
      () =>
        new StepwireError('script_worker_failed', `the script process failed: ${error.message}`, {
          cause: error,
        }),
    );
  });
  // `close` comes after the process's error output has all been read.
  child.on('close', (code, signal) => {
    events.failed((limits) =>
      OUT_OF_MEMORY.test(stderr)
        ? memoryError(limits)
        : new StepwireError(
            'script_worker_failed',
            `the script process exited with ${signal === null ? `code ${code}` : `signal ${signal}`}`,
          ),
    );
  });
  const handles = (): { ref(): void; unref(): void }[] =>
    [child, child.channel, child.stderr].filter((handle) => handle != null) as {
      ref(): void;
      unref(): void;
    }[];
  return {
    send: (request: ScriptWorkerRequest) => {
      if (!child.connected) throw new Error('the script process is gone');
      child.send(request);
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.ref(); // an idle child is unreferenced: awaiting its end must keep the host alive
      child.kill('SIGKILL');
      await gone;
    },
    ref: () => handles().forEach((handle) => handle.ref()),
    unref: () => handles().forEach((handle) => handle.unref()),
  };
}
