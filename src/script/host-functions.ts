/**
 * The host side of the guest prelude: the functions `getEntity`, `writeEntity` and `console` call
 * (copying inputs in, reading writes back, keeping logs), and their installation in a context.
 * @internal
 * @module
 */

import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten';
import { LimitError, StepwireError } from '../errors/index.js';
import { decodePacked, decodeWrite, type DecodedWrite } from './decode.js';
import { encodedColumn, encodingOf, entityHeader, type EncodedEntity } from './marshal.js';
import { PRELUDE_FILENAME, PRELUDE_SOURCE } from './prelude.js';
import { setOwn } from '../schema/own.js';
import { columnsRead } from './reads.js';
import type { ScriptInput } from './types.js';

/** What one run accumulates while it executes. @internal */
export interface RunState {
  fatal: StepwireError | undefined;
  /** Whether the interrupt handler stopped the script (time limit, cancel or a fatal host error). */
  interrupted: boolean;
  outputBytes: number;
  /** Bytes copied into the guest. */
  inputBytes: number;
  logChars: number;
  logs: string[];
  /** Cells of the row objects the guest was given or wrote: a lower bound of the heap it used. */
  guestCells: number;
  writes: Record<string, Record<string, unknown>[]>;
  encoded: Map<string, EncodedEntity>;
  /** Where set, every accepted write is also kept as the guest packed it, in call order. */
  packed?: PackedWrite[];
}

/** One accepted `writeEntity` call as the guest packed it (see `hostWrite`), to decode elsewhere. @internal */
export interface PackedWrite {
  name: string;
  kind: number;
  json: string;
  buffers: ArrayBufferLike[];
}

/** The rows of packed writes, by output entity, as the run that accepted them had them. @internal */
export function unpackWrites(
  outputs: readonly string[],
  packed: readonly PackedWrite[],
): Record<string, Record<string, unknown>[]> {
  const writes: Record<string, Record<string, unknown>[]> = Object.fromEntries(
    outputs.map((name) => [name, []]),
  );
  for (const { name, kind, json, buffers } of packed) {
    const decoded = decodeRows(name, kind, json, buffers);
    if ('problem' in decoded) throw new StepwireError('script_output', decoded.problem);
    if (!Object.hasOwn(writes, name)) throw new StepwireError('script_output', `no output entity "${name}"`);
    addRows(writes, name, decoded.rows);
  }
  return writes;
}

/** The three host functions the prelude calls, on plain values; each sandbox binds them its own way. @internal */
export interface RunHost {
  /** `hostGet(name, part)`: an entity's header or a column's metadata as JSON text, or a column's buffer. */
  get(name: string, part: number): string | ArrayBufferLike;
  /**
   * `hostWrite(name, kind, json, ...buffers)`: `json` as the guest gave it (not a string when the rows'
   * own `toJSON` made none); returns the problem with the rows, or `undefined` once they are kept.
   * `uncopiedBytes` counts buffers a binding did not copy, being past the output limit already.
   */
  write(
    name: string,
    kind: number,
    json: unknown,
    buffers: readonly ArrayBufferLike[],
    uncopiedBytes?: number,
  ): string | undefined;
  /** `hostLog(level, line)`: false once the log cap is reached. */
  log(level: string, line: string): boolean;
}

/** The rows of one `hostWrite` call: packed by column (`kind` 2) or as JSON. */
function decodeRows(
  name: string,
  kind: number,
  json: string,
  buffers: readonly ArrayBufferLike[],
): DecodedWrite {
  return kind === 2
    ? decodePacked(
        name,
        json,
        buffers.map((b) => new Uint8Array(b)),
      )
    : decodeWrite(name, kind, json);
}

/** Adds decoded rows to an output's writes; the rows are new, so the first write takes them as they are. */
function addRows(
  writes: Record<string, Record<string, unknown>[]>,
  name: string,
  rows: Record<string, unknown>[],
): void {
  const target = writes[name]!;
  if (target.length === 0) setOwn(writes, name, rows);
  else for (const row of rows) target.push(row);
}

/** A fresh {@link RunState} for `input`. @internal */
export function newRunState(input: ScriptInput): RunState {
  return {
    fatal: undefined,
    interrupted: false,
    outputBytes: 0,
    inputBytes: 0,
    logChars: 0,
    logs: [],
    guestCells: 0,
    writes: Object.fromEntries(input.outputs.map((name) => [name, []])),
    encoded: new Map(),
  };
}

/** The JSON text of the prelude's `namesJson` argument: the run's input and output names. @internal */
export function preludeNames(input: ScriptInput): string {
  return JSON.stringify({ i: Object.keys(input.inputs), o: input.outputs });
}

/** The host functions of one run: they copy inputs out, read writes back and keep logs in `state`. @internal */
export function runHost(input: ScriptInput, state: RunState): RunHost {
  const { limits } = input;
  const maxLog = limits.maxLogBytes ?? 64 * 1024;
  return {
    get(name, part) {
      let encoded = state.encoded.get(name);
      if (encoded === undefined) {
        const entity = input.inputs[name];
        if (entity === undefined || !Object.hasOwn(input.inputs, name)) throw new Error(`no input ${name}`);
        encoded = encodingOf(entity);
        state.encoded.set(name, encoded);
      }
      const column = part < -1 ? -2 - part : part;
      if (column >= encoded.entity.columns.length) throw new Error(`no column ${column} in ${name}`);
      if (part >= 0) {
        const buffer = encodedColumn(encoded, part).buffer;
        if (buffer === undefined) throw new Error(`no binary column ${part} in ${name}`);
        state.inputBytes += buffer.byteLength;
        return buffer;
      }
      let text: string;
      try {
        if (part === -1) {
          const names = encoded.entity.columns.map((c) => c.name);
          const read = columnsRead(input.source, names);
          text = entityHeader(encoded, read);
          state.guestCells += encoded.n * (read === undefined ? names.length : read.filter(Boolean).length);
        } else {
          const { kind, extra } = encodedColumn(encoded, column);
          text = JSON.stringify({ k: kind, d: extra });
        }
      } catch (error) {
        state.fatal = new StepwireError(
          'script_input',
          `input entity "${name}" cannot be copied into the script as JSON: ${String(error)}`,
        );
        throw error;
      }
      state.inputBytes += text.length;
      return text;
    },
    write(name, kind, json, buffers, uncopiedBytes = 0) {
      // What the rows' own toJSON made of them may be no JSON text at all (`undefined`).
      if (typeof json !== 'string')
        return (
          `writeEntity("${name}"): rows must be an array of objects keyed by column name or a data ` +
          `table {columns, rows}; their toJSON gave ${typeof json}`
        );
      let size = json.length + uncopiedBytes;
      for (const buffer of buffers) size += buffer.byteLength;
      state.outputBytes += size;
      if (state.outputBytes > limits.maxOutputBytes) {
        state.fatal ??= new LimitError(
          'script.output',
          `script wrote more than its output limit of ${limits.maxOutputBytes} bytes ` +
            '(JSON text, 8 bytes per packed number, 4 per packed string index)',
        );
        return state.fatal.message;
      }
      let decoded: DecodedWrite;
      try {
        decoded = decodeRows(name, kind, json, buffers);
      } catch {
        // Never a host exception for what a script handed over, however odd.
        decoded = { problem: `writeEntity("${name}"): the rows could not be read back` };
      }
      if ('problem' in decoded) return decoded.problem;
      state.packed?.push({ name, kind, json, buffers: [...buffers] });
      if (decoded.rows.length > 0)
        state.guestCells += decoded.rows.length * Object.keys(decoded.rows[0]!).length;
      addRows(state.writes, name, decoded.rows);
      return undefined;
    },
    log(level, line) {
      if (state.logChars >= maxLog) return false;
      const text = level === 'warn' || level === 'error' ? `[${level}] ${line}` : line;
      const room = maxLog - state.logChars;
      if (text.length >= room) {
        state.logs.push(text.slice(0, room), `[logs truncated at ${maxLog} characters]`);
        state.logChars = maxLog;
        return false;
      }
      state.logs.push(text);
      state.logChars += text.length;
      return true;
    },
  };
}

/** Evaluates the prelude in a fresh QuickJS context and hands it the host functions of this run. @internal */
export function installPrelude(context: QuickJSContext, input: ScriptInput, state: RunState): void {
  const host = runHost(input, state);
  const handles: QuickJSHandle[] = [];
  try {
    handles.push(
      context.newFunction('hostGet', (nameHandle, partHandle) => {
        const got = host.get(context.getString(nameHandle), context.getNumber(partHandle));
        return typeof got === 'string' ? context.newString(got) : context.newArrayBuffer(got);
      }),
      context.newFunction('hostWrite', (nameHandle, kindHandle, jsonHandle, ...bufferHandles) => {
        const name = context.getString(nameHandle);
        const json = context.typeof(jsonHandle) === 'string' ? context.getString(jsonHandle) : undefined;
        const buffers: ArrayBuffer[] = [];
        let size = json?.length ?? 0;
        let uncopied = 0;
        for (const handle of bufferHandles) {
          const view = context.getArrayBuffer(handle);
          try {
            size += view.value.byteLength;
            // Past the output limit the write fails on its size alone: nothing more is copied.
            if (state.outputBytes + size <= input.limits.maxOutputBytes)
              buffers.push(view.value.slice().buffer);
            else uncopied += view.value.byteLength;
          } finally {
            view.dispose();
          }
        }
        const problem = host.write(name, context.getNumber(kindHandle), json, buffers, uncopied);
        return problem === undefined ? undefined : context.newString(problem);
      }),
      context.newFunction('hostLog', (levelHandle, lineHandle) =>
        host.log(context.getString(levelHandle), context.getString(lineHandle))
          ? context.true
          : context.false,
      ),
      context.newString(preludeNames(input)),
    );
    const prelude = context.unwrapResult(
      context.evalCode(PRELUDE_SOURCE, PRELUDE_FILENAME, { type: 'global' }),
    );
    handles.push(prelude);
    context.unwrapResult(context.callFunction(prelude, context.undefined, ...handles.slice(0, 4))).dispose();
  } finally {
    for (const handle of handles) handle.dispose();
  }
}
