/**
 * Turning what a QuickJS run ended with (a guest error, a host exception, a tripped limit) into
 * stepwire errors, and carrying those errors across a worker boundary.
 * @internal
 * @module
 */

import { CancelledError, LimitError, ScriptError, StepwireError } from '../errors/index.js';
import type { ScriptLimits } from './types.js';

/** Formats a byte count for messages: `64 MiB`, `512 KiB`, `100 bytes`. @internal */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** The error of a run that went past its time limit. @internal */
export function timeoutError(limits: ScriptLimits): LimitError {
  return new LimitError('script.timeout', `script exceeded its time limit of ${limits.timeoutMs} ms`);
}

/** The error of a run that ran out of its heap. @internal */
export function memoryError(limits: ScriptLimits): LimitError {
  return new LimitError(
    'script.memory',
    `script exceeded its memory limit of ${formatBytes(limits.memoryBytes)}`,
  );
}

/** The error of a run that recursed too deep. @internal */
export function stackError(limits: ScriptLimits): LimitError {
  return new LimitError(
    'script.stack',
    `script exceeded its stack limit of ${formatBytes(limits.stackBytes)} (too deep recursion)`,
  );
}

/** The error of a run cancelled through its signal. @internal */
export function cancelledError(): CancelledError {
  return new CancelledError('The script run was cancelled');
}

/** What a guest error looked like after `context.dump`. @internal */
export interface GuestError {
  name?: unknown;
  message?: unknown;
  stack?: unknown;
  lineNumber?: unknown;
}

/**
 * Maps a value the script threw to a stepwire error: QuickJS's own "interrupted", "out of memory"
 * and "stack overflow" become limit errors; anything else becomes a `ScriptError` with the 1-based
 * line of the innermost frame in the script file, when there is one.
 * @internal
 */
export function guestError(
  thrown: unknown,
  filename: string,
  lineCount: number,
  limits: ScriptLimits,
): StepwireError {
  if (thrown === null || typeof thrown !== 'object')
    return new ScriptError(`the script threw ${describeValue(thrown)}`);
  const error = thrown as GuestError;
  // Cut as any value a script throws is: the message goes into the run record.
  const name = typeof error.name === 'string' ? describeValue(error.name, 100) : 'Error';
  const message =
    typeof error.message === 'string' ? describeValue(error.message, 2000) : describeValue(thrown);
  if (name === 'InternalError') {
    if (message === 'interrupted') return timeoutError(limits);
    if (message === 'out of memory') return memoryError(limits);
    if (message === 'stack overflow') return stackError(limits);
  }
  let line = typeof error.lineNumber === 'number' ? error.lineNumber : undefined;
  if (typeof error.stack === 'string') line = scriptLine(error.stack, filename) ?? line;
  if (line !== undefined) line = Math.max(1, Math.min(line, lineCount));
  return new ScriptError(`${name}: ${message}`, line);
}

/** The first `filename:LINE` in a QuickJS stack, e.g. `    at f (transform.js:3)`. @internal */
export function scriptLine(stack: string, filename: string): number | undefined {
  const marker = `${filename}:`;
  let at = stack.indexOf(marker);
  while (at !== -1) {
    const digits = /^\d+/.exec(stack.slice(at + marker.length));
    if (digits) return Number(digits[0]);
    at = stack.indexOf(marker, at + marker.length);
  }
  return undefined;
}

/** A thrown value (or its message) as text of at most `most` characters, then `…`. */
function describeValue(value: unknown, most = 500): string {
  if (typeof value === 'string') return value.length > most ? `${value.slice(0, most)}…` : value;
  try {
    const text = JSON.stringify(value);
    if (text !== undefined) return text.length > most ? `${text.slice(0, most)}…` : text;
  } catch {
    // fall through to String()
  }
  const text = String(value);
  return text.length > most ? `${text.slice(0, most)}…` : text;
}

/** The lines a script logged before it failed, kept with the error it failed with. */
const LOGS = new WeakMap<object, readonly string[]>();

/** Keeps `logs` with `error` (see {@link logsOf}) and returns the error. @internal */
export function keepLogs<E extends object>(error: E, logs: readonly string[]): E {
  if (logs.length > 0) LOGS.set(error, logs);
  return error;
}

/** The lines a script logged before it failed with `error`; none when it logged nothing. @internal */
export function logsOf(error: unknown): readonly string[] {
  return (typeof error === 'object' && error !== null && LOGS.get(error)) || [];
}

/** A stepwire error as plain data, to cross a worker boundary. @internal */
export interface WireError {
  kind: 'script' | 'limit' | 'cancelled' | 'other';
  message: string;
  code?: string;
  limit?: string;
  line?: number;
  /** The lines the script logged before it failed. */
  logs?: readonly string[];
}

/** Converts any error to {@link WireError}, with the lines the script logged before it. @internal */
export function toWireError(error: unknown): WireError {
  const logs = logsOf(error);
  const wire = wireErrorOf(error);
  return logs.length > 0 ? { ...wire, logs } : wire;
}

function wireErrorOf(error: unknown): WireError {
  if (error instanceof ScriptError) {
    const prefix = error.line === undefined ? '' : `line ${error.line}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return error.line === undefined
      ? { kind: 'script', message }
      : { kind: 'script', message, line: error.line };
  }
  if (error instanceof LimitError) return { kind: 'limit', message: error.message, limit: error.limit };
  if (error instanceof CancelledError) return { kind: 'cancelled', message: error.message };
  if (error instanceof StepwireError) return { kind: 'other', message: error.message, code: error.code };
  return { kind: 'other', message: error instanceof Error ? error.message : String(error) };
}

/** Rebuilds the stepwire error described by a {@link WireError}, with its logs. @internal */
export function fromWireError(wire: WireError): StepwireError {
  return keepLogs(errorOfWire(wire), wire.logs ?? []);
}

function errorOfWire(wire: WireError): StepwireError {
  switch (wire.kind) {
    case 'script':
      return new ScriptError(wire.message, wire.line);
    case 'limit':
      return new LimitError(wire.limit ?? 'script', wire.message);
    case 'cancelled':
      return new CancelledError(wire.message);
    default:
      return new StepwireError(wire.code ?? 'script_failed', wire.message);
  }
}
