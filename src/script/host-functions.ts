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
}

/** Evaluates the prelude in a fresh context and hands it the host functions of this run. @internal */
export function installPrelude(context: QuickJSContext, input: ScriptInput, state: RunState): void {
  const { limits } = input;
  const maxLog = limits.maxLogBytes ?? 64 * 1024;
  const handles: QuickJSHandle[] = [];
  try {
    handles.push(
      context.newFunction('hostGet', (nameHandle, partHandle) => {
        const name = context.getString(nameHandle);
        const part = context.getNumber(partHandle);
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
          return context.newArrayBuffer(buffer);
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
        return context.newString(text);
      }),
      context.newFunction('hostWrite', (nameHandle, kindHandle, jsonHandle, ...bufferHandles) => {
        const name = context.getString(nameHandle);
        const kind = context.getNumber(kindHandle);
        // What the rows' own toJSON made of them may be no JSON text at all (`undefined`).
        if (context.typeof(jsonHandle) !== 'string')
          return context.newString(
            `writeEntity("${name}"): rows must be an array of objects keyed by column name or a data ` +
              `table {columns, rows}; their toJSON gave ${context.typeof(jsonHandle)}`,
          );
        const json = context.getString(jsonHandle);
        const buffers: Uint8Array[] = [];
        let size = json.length;
        for (const handle of bufferHandles) {
          const view = context.getArrayBuffer(handle);
          try {
            size += view.value.byteLength;
            if (state.outputBytes + size <= limits.maxOutputBytes) buffers.push(view.value.slice());
          } finally {
            view.dispose();
          }
        }
        state.outputBytes += size;
        if (state.outputBytes > limits.maxOutputBytes) {
          state.fatal ??= new LimitError(
            'script.output',
            `script wrote more than its output limit of ${limits.maxOutputBytes} bytes ` +
              '(JSON text, 8 bytes per packed number, 4 per packed string index)',
          );
          return context.newString(state.fatal.message);
        }
        let decoded: DecodedWrite;
        try {
          decoded = kind === 2 ? decodePacked(name, json, buffers) : decodeWrite(name, kind, json);
        } catch {
          // Never a host exception for what a script handed over, however odd.
          decoded = { problem: `writeEntity("${name}"): the rows could not be read back` };
        }
        if ('problem' in decoded) return context.newString(decoded.problem);
        const target = state.writes[name] as Record<string, unknown>[];
        if (decoded.rows.length > 0)
          state.guestCells += decoded.rows.length * Object.keys(decoded.rows[0]!).length;
        // The decoded rows are new: the first write takes them as they are.
        if (target.length === 0) state.writes[name] = decoded.rows;
        else for (const row of decoded.rows) target.push(row);
        return undefined;
      }),
      context.newFunction('hostLog', (levelHandle, lineHandle) => {
        if (state.logChars >= maxLog) return context.false;
        const level = context.getString(levelHandle);
        const line = context.getString(lineHandle);
        const text = level === 'warn' || level === 'error' ? `[${level}] ${line}` : line;
        const room = maxLog - state.logChars;
        if (text.length >= room) {
          state.logs.push(text.slice(0, room), `[logs truncated at ${maxLog} characters]`);
          state.logChars = maxLog;
          return context.false;
        }
        state.logs.push(text);
        state.logChars += text.length;
        return context.true;
      }),
      context.newString(JSON.stringify({ i: Object.keys(input.inputs), o: input.outputs })),
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
