/**
 * The in-process, edge-safe script sandbox on QuickJS compiled to WebAssembly.
 * @module
 */

import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  type CustomizeVariantOptions,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import { ScriptError, StepwireError } from '../errors/index.js';
import { installPrelude, newRunState, type RunState } from './host-functions.js';
import {
  cancelledError,
  checkLimits,
  countLines,
  guestError,
  keepLogs,
  memoryError,
  stackError,
  timeoutError,
  UNREADABLE,
  type ScriptPlace,
} from './outcome.js';
import type { ScriptInput, ScriptLimits, ScriptResult, ScriptSandbox } from './types.js';

/**
 * A sync build variant of QuickJS from `quickjs-emscripten`: its `RELEASE_SYNC` or `DEBUG_SYNC`, or
 * one made with `newVariant`. Written out here rather than imported, so the published declarations
 * need no QuickJS types: theirs need `Disposable`, which a project on the ES2022 library (and
 * without `@types/node`) does not have.
 */
export interface QuickJsVariant {
  /** Always `"sync"`: the sandbox calls QuickJS synchronously. */
  readonly type: 'sync';
  /** Loads the variant's foreign function interface. */
  readonly importFFI: () => Promise<unknown>;
  /** Loads the variant's Emscripten module loader. */
  readonly importModuleLoader: () => Promise<unknown>;
}

/** Options of {@link QuickJsSandbox}. */
export interface QuickJsSandboxOptions {
  /** QuickJS build to use (a sync variant); default `RELEASE_SYNC` of `quickjs-emscripten`. */
  variant?: QuickJsVariant;
  /**
   * The compiled QuickJS WebAssembly module. Needed where code cannot compile WebAssembly from
   * bytes, such as Cloudflare Workers: `import wasm from "@jitl/quickjs-wasmfile-release-sync/wasm"`
   * and pass `wasmModule: wasm`. Elsewhere the variant loads its own `.wasm` file.
   */
  wasmModule?: WebAssembly.Module | (() => Promise<WebAssembly.Module>);
}

const PAGE = 65536;
/** Linear memory beyond the script heap: the module's data, its C stack and allocator slack. */
const HEADROOM_BYTES = 16 * 1024 * 1024;
/** The module declares 16 MiB initial memory and at most 2 GiB. */
const MIN_PAGES = 256;
const MAX_PAGES = 32768;
/**
 * A runtime is kept for the next run only when what the last run left (garbage QuickJS has not
 * collected yet) is at most this; the next run's memory limit is raised by what is left.
 */
const KEEP_RUNTIME_BYTES = 4 * 1024 * 1024;
/**
 * The C stack of the QuickJS build (its WebAssembly module reserves 5 MiB), less room for the host's
 * own calls into it: QuickJS's stack limit is clamped to this, since a limit past the C stack makes
 * every call fail.
 */
const MAX_STACK_BYTES = 4 * 1024 * 1024;

/** A QuickJS instance, and how often its WebAssembly memory refused to grow. */
interface Instance {
  module: QuickJSWASMModule;
  /** Refused growths of the memory so far; a run that sees it rise ran out of memory. */
  refusals: { count: number };
}

/** A runtime kept between runs, and the bytes the runs before left in it. */
interface IdleRuntime {
  runtime: QuickJSRuntime;
  leftBytes: number;
  /**
   * Bytes the last run copied in and out, plus a lower bound of the row objects made of them: past
   * {@link KEEP_RUNTIME_BYTES}, its heap is not measured.
   */
  copiedBytes: number;
}

/**
 * Runs transform scripts in QuickJS (WebAssembly), in process and edge-safe. Each run gets a fresh
 * context (its own globals and built-ins); the script sees only `getEntity`, `writeEntity` and
 * `console`. The QuickJS runtime under it is kept for the next run after a run that succeeded and
 * left no pending job and little memory, and is thrown away after anything else.
 *
 * Memory is bounded by giving each QuickJS instance a WebAssembly memory whose maximum is the
 * heap limit plus 16 MiB, since QuickJS's own limit does not count large strings in this build.
 * Time is bounded by QuickJS's interrupt handler, which QuickJS consults every ~10,000 bytecode
 * jumps: a script stuck in one long native call (a huge `repeat`, `sort`) is only stopped when
 * that call returns. Where a hard wall-clock bound matters, use `WorkerSandbox` from
 * `stepwire/node`, which also kills the thread.
 *
 * Stack: QuickJS's interpreter recurses on the host thread's own stack too, using about twice the
 * bytes its `stackBytes` count sees. On Node's main thread (about 1 MiB of stack) deep recursion
 * therefore stops at roughly half the 1 MiB default (about 2,500 simple frames), with the same
 * `script.stack` error but not catchable by the script; `WorkerSandbox` threads have 4 MiB and reach
 * the full 1 MiB. `stackBytes` is clamped to 4 MiB, the QuickJS build's C stack less a margin.
 */
export class QuickJsSandbox implements ScriptSandbox {
  readonly #variant: QuickJSSyncVariant;
  readonly #wasmModule: QuickJsSandboxOptions['wasmModule'];
  /** One QuickJS instance per memory size; replaced when one fails in a way it cannot recover from. */
  readonly #modules = new Map<number, Promise<Instance>>();
  /** The runtime kept for the next run, per memory size. */
  readonly #idle = new Map<number, IdleRuntime>();

  constructor(options: QuickJsSandboxOptions = {}) {
    // The variant's own type, which the public one writes out without QuickJS's types.
    this.#variant = (options.variant as QuickJSSyncVariant | undefined) ?? RELEASE_SYNC;
    this.#wasmModule = options.wasmModule;
  }

  /** Runs `input.source` once; see {@link ScriptSandbox.run}. */
  async run(input: ScriptInput): Promise<ScriptResult> {
    checkLimits(input.limits);
    if (input.signal?.aborted) throw cancelledError();
    const pages = memoryPages(input.limits.memoryBytes);
    const { module, refusals } = await this.#module(pages);
    if (input.signal?.aborted) throw cancelledError();
    let broken = false;
    const idle = this.#idle.get(pages);
    this.#idle.delete(pages);
    const runtime: IdleRuntime = idle ?? { runtime: module.newRuntime(), leftBytes: 0, copiedBytes: 0 };
    let keep = false;
    try {
      const result = runOnce(runtime, input, refusals, () => {
        broken = true;
      });
      keep = true;
      return result;
    } finally {
      if (!broken && keep && !this.#idle.has(pages) && reusable(runtime)) this.#idle.set(pages, runtime);
      else if (broken || !disposeRuntime(runtime.runtime)) this.#modules.delete(pages);
    }
  }

  #module(pages: number): Promise<Instance> {
    let module = this.#modules.get(pages);
    if (module === undefined) {
      const wasmMemory = new WebAssembly.Memory({ initial: MIN_PAGES, maximum: pages });
      // QuickJS's allocator grows the memory through `grow`; a refusal there is the one sure sign the
      // heap is full, which QuickJS may not be able to say itself (it then throws `null`).
      const refusals = { count: 0 };
      const grow = wasmMemory.grow.bind(wasmMemory);
      wasmMemory.grow = (delta: number): number => {
        try {
          return grow(delta);
        } catch (error) {
          refusals.count++;
          throw error;
        }
      };
      // Emscripten would print its own abort messages to the host console; the errors say it all.
      // `print`/`printErr` are Emscripten module settings the typings do not list.
      const quiet = {
        print: () => {},
        printErr: () => {},
      } as unknown as CustomizeVariantOptions['emscriptenModule'];
      const options: CustomizeVariantOptions = { wasmMemory };
      if (quiet !== undefined) options.emscriptenModule = quiet;
      if (this.#wasmModule !== undefined) options.wasmModule = this.#wasmModule;
      const variant = newVariant(this.#variant, options);
      const withoutModule = this.#wasmModule === undefined;
      module = newQuickJSWASMModuleFromVariant(variant).then(
        (loaded) => ({ module: loaded, refusals }),
        (error: unknown) => {
          // Where the variant cannot fetch its own .wasm file (Cloudflare Workers), say how to give it one.
          const message = error instanceof Error ? error.message : String(error);
          throw new StepwireError(
            'sandbox_unavailable',
            `the QuickJS WebAssembly module could not be loaded (${message})` +
              (withoutModule
                ? '; where the runtime cannot load it by itself (Cloudflare Workers), import the .wasm file and pass new QuickJsSandbox({ wasmModule }) as the engine sandbox'
                : ''),
            { cause: error },
          );
        },
      );
      module.catch(() => this.#modules.delete(pages));
      this.#modules.set(pages, module);
    }
    return module;
  }
}

function memoryPages(memoryBytes: number): number {
  return Math.min(MAX_PAGES, Math.max(MIN_PAGES, Math.ceil((memoryBytes + HEADROOM_BYTES) / PAGE)));
}

/**
 * True when a runtime may serve the next run: no promise job is left and what the run left in memory
 * is small (it is then counted on top of the next run's limit). Sets `leftBytes`.
 */
function reusable(idle: IdleRuntime): boolean {
  try {
    // Measuring walks the whole heap; a run that copied this much leaves too much anyway.
    if (idle.copiedBytes > KEEP_RUNTIME_BYTES || idle.runtime.hasPendingJob()) return false;
    const used = /memory used\s+\d+\s+(\d+)/.exec(idle.runtime.dumpMemoryUsage());
    if (used === null) return false;
    idle.runtime.removeInterruptHandler(); // it holds the finished run's state
    idle.leftBytes = Number(used[1]);
    return idle.leftBytes <= KEEP_RUNTIME_BYTES;
  } catch {
    return false;
  }
}

/** Frees a runtime; false when QuickJS failed doing so (it asserts on leftovers after an out-of-memory). */
function disposeRuntime(runtime: QuickJSRuntime): boolean {
  try {
    runtime.dispose();
    return true;
  } catch {
    return false;
  }
}

function runOnce(
  idle: IdleRuntime,
  input: ScriptInput,
  refusals: { count: number },
  markBroken: () => void,
): ScriptResult {
  const { limits, signal } = input;
  // QuickJS counts lines by \n only: a lone \r (a line break to the editor) becomes \n, which
  // changes no meaning (a template literal reads both as \n; elsewhere both end a line).
  const source = input.source.includes('\r') ? input.source.replace(/\r(?!\n)/g, '\n') : input.source;
  const place: ScriptPlace = {
    filename: input.filename ?? 'script.js',
    source,
    lineCount: countLines(source),
  };
  const refusedBefore = refusals.count;
  /** Whether the WebAssembly memory refused to grow during this run: its heap is full. */
  const exhausted = (): boolean => refusals.count > refusedBefore;
  const state: RunState = newRunState(input);
  const deadline = Date.now() + limits.timeoutMs;
  const runtime = idle.runtime;
  let context: QuickJSContext | undefined;
  /** The stepwire error a run that threw `error` fails with. */
  const failure = (error: unknown): StepwireError => {
    if (error instanceof StepwireError) return error;
    // A host exception out of the WebAssembly code leaves the instance unusable.
    markBroken();
    if (state.fatal !== undefined) return state.fatal;
    if (error instanceof RangeError && /call stack/i.test(error.message)) return stackError(limits);
    if (Date.now() > deadline) return timeoutError(limits);
    if (exhausted()) return memoryError(limits);
    if (error instanceof Error && /out of memory|OOM|memory access out of bounds/i.test(error.message))
      return memoryError(limits);
    return new ScriptError(
      `the script engine failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  };
  try {
    // QuickJS counts 8 bytes per allocation in this build (it cannot see allocation sizes) plus the size
    // asked for: its limit refuses single large allocations, while the WebAssembly memory bounds the
    // heap. Below half that memory's size, its count could run out first on small allocations, leaving
    // QuickJS no room to say so (it throws `null`); at half, a full heap always shows as a refused growth.
    runtime.setMemoryLimit(
      Math.max(limits.memoryBytes + idle.leftBytes, (memoryPages(limits.memoryBytes) * PAGE) / 2),
    );
    runtime.setMaxStackSize(Math.min(limits.stackBytes, MAX_STACK_BYTES));
    // Remembered, because an interrupt inside a promise job only rejects that job's promise.
    runtime.setInterruptHandler(() => {
      if (state.fatal !== undefined || Date.now() > deadline || signal?.aborted === true)
        state.interrupted = true;
      return state.interrupted;
    });
    context = runtime.newContext();
    installPrelude(context, input, state);
    const evaluated = context.evalCode(source, place.filename, { type: 'global' });
    let thrown: StepwireError | undefined;
    if (evaluated.error) {
      thrown = guestError(dumpSafely(context, evaluated.error), place, limits, exhausted());
      evaluated.error.dispose();
    } else {
      thrown = drainJobs(runtime, context, place, limits, exhausted);
      thrown ??= settledValue(context, evaluated.value, place, limits, exhausted);
      evaluated.value.dispose();
    }
    if (state.fatal !== undefined) throw state.fatal;
    if (signal?.aborted) throw cancelledError();
    if (state.interrupted) throw timeoutError(limits);
    if (thrown !== undefined) {
      if (Date.now() > deadline && !(thrown instanceof ScriptError)) throw timeoutError(limits);
      // A heap that filled up may leave QuickJS unable to free it cleanly: start afresh.
      if (exhausted()) markBroken();
      throw thrown;
    }
    // A script that ends past its limit (inside one long built-in call, which the interrupt handler
    // cannot stop) has overrun it all the same.
    if (Date.now() > deadline) throw timeoutError(limits);
    // Each cell of a guest row object takes at least 16 bytes (its shape entry and its value).
    idle.copiedBytes = state.inputBytes + state.outputBytes + state.guestCells * 16;
    return { writes: state.writes, logs: state.logs };
  } catch (error) {
    // The lines the script logged before it failed go with the error, into the step's record.
    throw keepLogs(failure(error), state.logs);
  } finally {
    try {
      context?.dispose();
    } catch {
      // QuickJS asserts on leftover objects after an out-of-memory or overflow; drop the instance.
      markBroken();
    }
  }
}

function drainJobs(
  runtime: QuickJSRuntime,
  context: QuickJSContext,
  place: ScriptPlace,
  limits: ScriptLimits,
  exhausted: () => boolean,
): StepwireError | undefined {
  if (!runtime.hasPendingJob()) return undefined;
  const jobs = runtime.executePendingJobs(-1);
  if (!jobs.error) return undefined;
  const error = guestError(dumpSafely(context, jobs.error), place, limits, exhausted());
  jobs.error.dispose();
  return error;
}

/**
 * A script whose last statement is a promise (`main();` with an async `main`) is done when that promise
 * is: its rejection fails the step, and it must have settled once the promise jobs are drained.
 */
function settledValue(
  context: QuickJSContext,
  value: QuickJSHandle,
  place: ScriptPlace,
  limits: ScriptLimits,
  exhausted: () => boolean,
): StepwireError | undefined {
  if (context.typeof(value) !== 'object') return undefined;
  const state = context.getPromiseState(value);
  if (state.type === 'fulfilled') {
    if (!state.notAPromise) state.value.dispose();
    return undefined;
  }
  if (state.type === 'pending')
    return new ScriptError('the promise the script ended with never settled: nothing resolves it');
  const error = guestError(dumpSafely(context, state.error), place, limits, exhausted());
  state.error.dispose();
  return error;
}

/** The thrown value as plain data, or {@link UNREADABLE} when reading it failed (a full heap). */
function dumpSafely(context: QuickJSContext, handle: QuickJSHandle): unknown {
  try {
    const object = context.typeof(handle) === 'object';
    const value: unknown = context.dump(handle);
    // An object QuickJS could not turn into JSON comes back as text (empty when it had no memory).
    return object && value === '' ? UNREADABLE : value;
  } catch {
    return UNREADABLE;
  }
}
