/**
 * The inside of `IsolatedVmSandbox`'s child processes: transform scripts run in V8 isolates of the
 * `isolated-vm` package, with the prelude `QuickJsSandbox` uses.
 * @internal
 * @module
 */

import { createRequire } from 'node:module';
import type * as Ivm from 'isolated-vm';
import { ScriptError, StepwireError } from '../../errors/index.js';
import {
  newRunState,
  preludeNames,
  runHost,
  type PackedWrite,
  type RunState,
} from '../../script/host-functions.js';
import { fromPreEncoded, type PreEncodedEntity } from '../../script/marshal.js';
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
} from '../../script/outcome.js';
import { PRELUDE_FILENAME, PRELUDE_SOURCE } from '../../script/prelude.js';
import type { ScriptInput, ScriptResult } from '../../script/types.js';

/** The runner the guest hands back: step `0` runs the script, `1` says how it ended. */
type Runner = Ivm.Reference<(step: number, source: string) => Outcome | 0>;

/** What one runner step reports: the script threw, or ended (`settled` once its promise did). */
interface Outcome {
  thrown?: DumpedError;
  /** 0: no promise or fulfilled; 1: still pending; 2: rejected (`thrown` says with what). */
  settled: number;
}

/** A thrown value as the guest copied it out: `p` a primitive, else an object's parts. */
interface DumpedError {
  p?: unknown;
  o?: unknown;
  name?: unknown;
  message?: unknown;
  stack?: unknown;
  unreadable?: boolean;
}

/**
 * The guest code after the prelude: it captures the built-ins it needs before the script can touch
 * them and returns the runner. The script runs as a classic script through an indirect `eval` with
 * a `sourceURL` naming its file, so its stack frames read `transform.js:LINE:COLUMN`.
 */
const RUNNER_SOURCE = String.raw`
  var indirectEval = eval, then = Promise.prototype.then, apply = Reflect.apply, parse = JSON.parse;
  var stringify = JSON.stringify, StringCtor = String, ended, settled = 0, reason;
  // WebAssembly memories and resizable or growable buffers lie outside the isolate's memory limit
  // (QuickJS has neither): WebAssembly goes, and the buffer constructors make plain buffers only.
  delete globalThis.WebAssembly;
  function plainBuffers(Original, name) {
    var construct = Reflect.construct, proto = Original.prototype;
    var Plain = function (length) {
      if (new.target === undefined) throw new TypeError('Constructor ' + name + " requires 'new'");
      return construct(Original, [length], new.target === Plain ? Original : new.target);
    };
    Object.defineProperty(Plain, 'name', { value: name });
    Object.defineProperty(Plain, 'prototype', { value: proto });
    if (Original.isView) Object.defineProperty(Plain, 'isView', { value: Original.isView, writable: true, configurable: true });
    Object.defineProperty(Plain, Symbol.species, { get: function () { return this; }, configurable: true });
    Object.defineProperty(proto, 'constructor', { value: Plain, writable: true, configurable: true });
    Object.defineProperty(globalThis, name, { value: Plain, writable: true, configurable: true });
  }
  plainBuffers(ArrayBuffer, 'ArrayBuffer');
  plainBuffers(SharedArrayBuffer, 'SharedArrayBuffer');
  function read(value, key) {
    try { var got = value[key]; return typeof got === 'string' ? got : undefined; } catch (e) { return undefined; }
  }
  function dump(value) {
    try {
      if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
        return { p: typeof value === 'symbol' || typeof value === 'bigint' ? StringCtor(value) : value };
      }
      var plain;
      try { plain = parse(stringify(value)); } catch (e) { plain = undefined; }
      return { o: plain, name: read(value, 'name'), message: read(value, 'message'), stack: read(value, 'stack') };
    } catch (e) {
      return { unreadable: true };
    }
  }
  function run(source) {
    var value;
    try { value = indirectEval(source); } catch (e) { return { thrown: dump(e) }; }
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return {};
    try {
      apply(then, value, [function () { settled = 0; }, function (e) { settled = 2; reason = e; }]);
      settled = 1;
    } catch (e) {
      settled = 0;
    }
    return {};
  }
  // Step 0 runs the script; step 1 says how it ended, once its promise jobs have run.
  return function (step, source) {
    if (step === 0) { ended = run(source); return 0; }
    if (ended === undefined) return { settled: 0, thrown: { unreadable: true } };
    if (ended.thrown !== undefined) return { settled: 0, thrown: ended.thrown };
    return settled === 2 ? { settled: 2, thrown: dump(reason) } : { settled: settled };
  };`;

const MIB = 1024 * 1024;
/** Memory a run's process may grow by past the run's `memoryBytes` before the run ends as out of memory. */
const RSS_MARGIN_BYTES = 256 * MIB;
/** How often a run's process memory is looked at. */
const RSS_CHECK_MS = 20;
/**
 * Time past a run's deadline after which its isolate is disposed: V8's own termination misses a
 * script that spends its time in host calls (a loop of `console.log`), the host does not.
 */
const OVERRUN_MS = 100;

/**
 * Runs transform scripts in V8 isolates of `isolated-vm`, in this process, a fresh isolate for each
 * run: work a script leaves behind (a promise job, a finalizer, an `Atomics.waitAsync`) cannot reach
 * the next run. Used inside the child processes of `IsolatedVmSandbox`, which started Node with
 * `--no-node-snapshot` (isolated-vm needs it) and which a script that crashes V8 takes down alone.
 * @internal
 */
export class IsolateRunner {
  readonly #ivm: typeof Ivm;

  constructor() {
    this.#ivm = createRequire(import.meta.url)('isolated-vm') as typeof Ivm;
  }

  /**
   * Runs `input.source` once; see `ScriptSandbox.run`. With `encoded`, the inputs come encoded by
   * column and the writes go back packed too (`packed`, with `writes` left empty).
   */
  async run(
    input: ScriptInput,
    encoded?: Record<string, PreEncodedEntity>,
  ): Promise<ScriptResult & { packed?: PackedWrite[] }> {
    checkLimits(input.limits);
    const mebibytes = Math.max(8, Math.ceil(input.limits.memoryBytes / MIB));
    const isolate = new this.#ivm.Isolate({ memoryLimit: mebibytes });
    try {
      return await runOnce(this.#ivm, isolate, input, encoded);
    } finally {
      if (!isolate.isDisposed) isolate.dispose();
    }
  }
}

async function runOnce(
  ivm: typeof Ivm,
  isolate: Ivm.Isolate,
  input: ScriptInput,
  encoded: Record<string, PreEncodedEntity> | undefined,
): Promise<ScriptResult & { packed?: PackedWrite[] }> {
  const { limits, signal } = input;
  const filename = input.filename ?? 'script.js';
  // The name V8 reports in stack frames: a sourceURL ends at white space.
  const frameFile = filename.replace(/\s/g, '_');
  const source = input.source.includes('\r') ? input.source.replace(/\r(?!\n)/g, '\n') : input.source;
  const place: ScriptPlace = { filename: frameFile, source, lineCount: countLines(source) };
  const state: RunState = newRunState(input);
  if (encoded !== undefined) {
    for (const [name, entity] of Object.entries(encoded)) state.encoded.set(name, fromPreEncoded(entity));
    state.packed = [];
  }
  const deadline = Date.now() + limits.timeoutMs;
  /** Why this run disposed its isolate, when it did. */
  let ended: Ended | undefined;
  const end = (why: Ended): void => {
    ended ??= why;
    if (!isolate.isDisposed) isolate.dispose();
  };
  const onAbort = (): void => end('cancelled');
  signal?.addEventListener('abort', onAbort, { once: true });
  // Memory V8 does not count against the isolate (ICU's objects, a heap past its limit) still counts
  // against the process: past the limit and a margin, the run ends as out of memory.
  const ceiling = process.memoryUsage.rss() + limits.memoryBytes + RSS_MARGIN_BYTES;
  const watch = setInterval(() => {
    if (process.memoryUsage.rss() > ceiling) end('memory');
  }, RSS_CHECK_MS);
  const overrun = setTimeout(() => end('timeout'), limits.timeoutMs + OVERRUN_MS);
  let context: Ivm.Context | undefined;
  let runner: Runner | undefined;
  const timeout = (): number => Math.max(1, deadline - Date.now());
  try {
    // Compiled here first for its syntax errors, which name the line (`[transform.js:2:9]`).
    try {
      (await isolate.compileScript(source, { filename: frameFile })).release();
    } catch (error) {
      if (isolate.isDisposed || !(error instanceof SyntaxError)) throw error;
      throw syntaxError(error, frameFile, place);
    }
    context = await isolate.createContext();
    const host = runHost(input, state);
    runner = (await context.evalClosure(
      // Strict, so a script function's `caller` never reaches the runner.
      `'use strict';(${PRELUDE_SOURCE})($0, $1, $2, $3);${RUNNER_SOURCE}`,
      [
        new ivm.Callback((name: string, part: number) => host.get(name, part)),
        new ivm.Callback((name: string, kind: number, json: unknown, ...buffers: ArrayBuffer[]) =>
          host.write(name, kind, json, buffers),
        ),
        new ivm.Callback((level: string, line: string) => host.log(level, line)),
        preludeNames(input),
      ],
      { filename: PRELUDE_FILENAME, timeout: timeout(), result: { reference: true } },
    )) as Runner;
    const script = `${source}\n//# sourceURL=${frameFile}`;
    // A promise the script rejected and left without a handler makes isolated-vm fail the call that
    // ran its jobs; QuickJS lets such a promise be, and so does this: the steps are asked again.
    await callInto(isolate, deadline, () => runner!.apply(undefined, [0, script], { timeout: timeout() }));
    let outcome: Outcome | undefined;
    for (let asked = 0; outcome === undefined && asked < 3; asked++)
      outcome = await callInto(isolate, deadline, () => step(runner!, 1, timeout()));
    if (outcome === undefined)
      throw new ScriptError('the script engine failed: the run did not say how it ended');
    if (state.fatal !== undefined) throw state.fatal;
    if (signal?.aborted) throw cancelledError();
    if (outcome.thrown !== undefined) throw thrownError(outcome.thrown, place, input);
    if (outcome.settled === 1)
      throw new ScriptError('the promise the script ended with never settled: nothing resolves it');
    if (Date.now() > deadline) throw timeoutError(limits);
    if (state.packed !== undefined) return { writes: {}, logs: state.logs, packed: state.packed };
    return { writes: state.writes, logs: state.logs };
  } catch (error) {
    throw keepLogs(failure(error, state, input, ended, isolate), state.logs);
  } finally {
    clearInterval(watch);
    clearTimeout(overrun);
    signal?.removeEventListener('abort', onAbort);
    runner?.release();
    if (!isolate.isDisposed) context?.release();
  }
}

function step(runner: Runner, kind: number, timeout: number): Promise<Outcome> {
  return runner.apply(undefined, [kind, ''], { timeout, result: { copy: true } }) as Promise<Outcome>;
}

/** What {@link callInto} throws when isolated-vm ended a call at its time limit. */
const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * Runs `call`; undefined when it failed with the value of a promise the script rejected and left
 * unhandled (isolated-vm throws it once the call's promise jobs have run). A disposed isolate (its
 * memory limit, a cancel) fails as it did; isolated-vm's own time limit throws {@link TIMED_OUT}.
 * The time limit is told by its message and the clock together: a script may reject with any text,
 * but not at a time of its choosing past the deadline.
 */
async function callInto<T>(
  isolate: Ivm.Isolate,
  deadline: number,
  call: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (isolate.isDisposed) throw error;
    if (
      Date.now() >= deadline - 5 &&
      error instanceof Error &&
      error.message === 'Script execution timed out.'
    )
      throw TIMED_OUT;
    return undefined;
  }
}

/** Why a run disposed its isolate: a cancel, the process's memory, or the script overrunning its time. */
type Ended = 'cancelled' | 'memory' | 'timeout';

/** The stepwire error a run failing with `error` ends with. */
function failure(
  error: unknown,
  state: RunState,
  input: ScriptInput,
  ended: Ended | undefined,
  isolate: Ivm.Isolate,
): StepwireError {
  if (state.fatal !== undefined) return state.fatal;
  if (ended === 'cancelled' || input.signal?.aborted === true) return cancelledError();
  if (ended === 'timeout') return timeoutError(input.limits);
  if (error instanceof StepwireError) return error;
  // Told by what happened, not by the error's text, which a script may choose (a rejection).
  if (ended === 'memory' || isolate.isDisposed) return memoryError(input.limits);
  if (error === TIMED_OUT) return timeoutError(input.limits);
  const message = error instanceof Error ? error.message : String(error);
  return new ScriptError(`the script engine failed: ${message}`);
}

/** A syntax error of the script, at the line V8 names in its message. */
function syntaxError(error: SyntaxError, frameFile: string, place: ScriptPlace): ScriptError {
  const suffix = ` [${frameFile}:`;
  const at = error.message.lastIndexOf(suffix);
  const position = at === -1 ? null : /^(\d+):\d+\]$/.exec(error.message.slice(at + suffix.length));
  const message = position === null ? error.message : error.message.slice(0, at);
  const line = position === null ? undefined : Math.min(Number(position[1]), place.lineCount);
  return new ScriptError(`SyntaxError: ${message}`, line);
}

/** The stepwire error of a value the script threw (or its promise rejected with). */
function thrownError(dumped: DumpedError, place: ScriptPlace, input: ScriptInput): StepwireError {
  if (dumped.unreadable === true) return guestError(UNREADABLE, place, input.limits);
  if (!('o' in dumped)) return guestError(dumped.p, place, input.limits);
  if (dumped.name === 'RangeError' && dumped.message === 'Maximum call stack size exceeded')
    return stackError(input.limits);
  const plain = dumped.o;
  const named = dumped.name !== undefined || dumped.message !== undefined;
  // An array or a value JSON could not copy goes as it came when it has no name and no message.
  if (!named && !(plain !== null && typeof plain === 'object' && !Array.isArray(plain)))
    return guestError(plain ?? {}, place, input.limits);
  const thrown: Record<string, unknown> =
    plain !== null && typeof plain === 'object' && !Array.isArray(plain)
      ? (plain as Record<string, unknown>)
      : {};
  if (dumped.name !== undefined) thrown['name'] = dumped.name;
  if (dumped.message !== undefined) thrown['message'] = dumped.message;
  delete thrown['stack'];
  if (typeof dumped.stack === 'string') thrown['lineNumber'] = stackLine(dumped.stack, place.filename);
  return guestError(thrown, place, input.limits);
}

/** The line of the innermost frame of the script in a V8 stack (`at f (transform.js:3:7)`). */
function stackLine(stack: string, filename: string): number | undefined {
  const marker = `${filename}:`;
  for (const frame of stack.split('\n')) {
    const text = frame.trim();
    if (!text.startsWith('at ')) continue;
    const at = text.lastIndexOf(marker);
    if (at === -1) continue;
    const before = text[at - 1];
    if (before !== '(' && before !== ' ') continue;
    const position = /^(\d+):\d+\)?$/.exec(text.slice(at + marker.length));
    if (position !== null) return Number(position[1]);
  }
  return undefined;
}
