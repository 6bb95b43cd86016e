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

/** The script a run evaluates, to place its errors: its file name, its source and its line count. @internal */
export interface ScriptPlace {
  filename: string;
  source: string;
  lineCount: number;
}

/**
 * Maps a value the script threw to a stepwire error: QuickJS's own "interrupted", "out of memory"
 * and "stack overflow" become limit errors; anything else becomes a `ScriptError` with the 1-based
 * line of the script where it was raised (see {@link scriptLine}), when there is one. With
 * `memoryExhausted`, a thrown `null` or a value that could not be read (what QuickJS throws when it
 * has no memory left to make its out-of-memory error, or to describe the error) is the memory limit.
 * @internal
 */
export function guestError(
  thrown: unknown,
  place: ScriptPlace,
  limits: ScriptLimits,
  memoryExhausted = false,
): StepwireError {
  if (memoryExhausted && (thrown === null || thrown === UNREADABLE || thrown === ''))
    return memoryError(limits);
  if (thrown === UNREADABLE) return new ScriptError('the script threw a value that cannot be read');
  if (thrown === null || typeof thrown !== 'object')
    return new ScriptError(
      `the script threw ${describeValue(thrown)}`,
      place.lineCount === 1 ? 1 : undefined,
    );
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
  if (typeof error.stack === 'string') line = scriptLine(error.stack, place.filename, place.source) ?? line;
  if (line === undefined && place.lineCount === 1) line = 1;
  if (line !== undefined) line = Math.max(1, Math.min(line, place.lineCount));
  return new ScriptError(`${name}: ${message}`, line);
}

/** What {@link guestError} is given for a thrown value the host could not read. @internal */
export const UNREADABLE: unique symbol = Symbol('unreadable');

/**
 * The script line an error was raised on, from its QuickJS stack (`    at f (transform.js:3)`, one
 * frame a line): the line of the innermost frame of the script file (frames of other files, as the
 * prelude's, are passed over). QuickJS gives no line for a frame whose function is written on one
 * line (`    at check (transform.js)`): that frame's line is where its function is defined, found
 * in `source` when exactly one definition has its name (`<eval>`, the script's own top level, is
 * line 1); when none or several do, it is the line of the next frame of the script, the caller's.
 * @internal
 */
export function scriptLine(stack: string, filename: string, source?: string): number | undefined {
  const lineless = `(${filename})`;
  const lined = `(${filename}:`;
  let definedOnce = true;
  for (const frame of stack.split('\n')) {
    const text = frame.trimEnd();
    if (text.endsWith(lineless)) {
      if (!definedOnce) continue;
      // The innermost frame of the script has no line: its function is written on one line.
      const name = frameName(text, lineless);
      const line = name === '<eval>' ? 1 : source === undefined ? undefined : definitionLine(source, name);
      if (line !== undefined) return line;
      definedOnce = false;
      continue;
    }
    const digits = /:(\d+)\)$/.exec(text);
    if (digits === null) continue;
    if (text.slice(0, digits.index + 1).endsWith(lined)) return Number(digits[1]);
  }
  return undefined;
}

/** The function name of a stack frame `    at NAME (FILE)`. */
function frameName(text: string, file: string): string {
  const start = text.indexOf('at ') + 3;
  return text.slice(start, text.length - file.length).trimEnd();
}

/** Longest function name looked for in a script's source: a longer one is not looked for. */
const MAX_DEFINITION_NAME = 256;

/**
 * The line of the one definition in `source` of a function QuickJS names `name` (`check`, `get a`),
 * or undefined when there is none or more than one (`<anonymous>` is never looked for). Only read
 * when a script failed. The script writes both `source` and `name` (a thrown object may carry any
 * `stack`), so `name` is escaped into the patterns as literal text and kept short, and no pattern
 * has two quantifiers that could take the same run of characters: each runs in time linear in
 * `source`.
 */
function definitionLine(source: string, name: string): number | undefined {
  if (name === '' || name === '<anonymous>' || name.includes('\n') || name.length > MAX_DEFINITION_NAME)
    return undefined;
  const accessor = /^(get|set) (.+)$/.exec(name);
  const id = (accessor?.[2] ?? name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const patterns = accessor
    ? [new RegExp(`\\b${accessor[1]}\\s+${id}\\s*\\(`, 'g')]
    : [
        // `\s*(?:\*\s*)?`, not `\s*\*?\s*`: two `\s*` in a row backtrack over a run of spaces in
        // quadratic time (20,000 spaces after `function` took 2 s).
        new RegExp(`\\bfunction\\b\\s*(?:\\*\\s*)?${id}\\s*\\(`, 'g'),
        new RegExp(`(?:^|[^\\w$.])${id}\\s*[:=]\\s*(?:async\\b\\s*)?(?:function\\b|\\(|[\\w$]+\\s*=>)`, 'g'),
        new RegExp(`(?:^|[{},;\\s*])${id}\\s*\\([^()]*\\)\\s*\\{`, 'g'),
        new RegExp(`\\bclass\\s+${id}\\b`, 'g'),
      ];
  const lines = new Set<number>();
  for (const pattern of patterns) {
    // Matches come in order: each newline is found once per pattern, not again for each match.
    let line = 1;
    let newline = source.indexOf('\n');
    for (const match of source.matchAll(pattern)) {
      while (newline !== -1 && newline < match.index) {
        line++;
        newline = source.indexOf('\n', newline + 1);
      }
      lines.add(line);
      if (lines.size > 1) return undefined;
    }
  }
  return lines.size === 1 ? [...lines][0] : undefined;
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

/** Refuses limits that are not positive finite numbers (`invalid_limit`, naming the limit). @internal */
export function checkLimits(limits: ScriptLimits): void {
  for (const key of ['timeoutMs', 'memoryBytes', 'stackBytes', 'maxOutputBytes'] as const) {
    const value = limits[key];
    if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) {
      throw new StepwireError(
        'invalid_limit',
        `script limit ${key} must be a positive number, got ${String(value)}`,
      );
    }
  }
}

/** The lines of a script source, counted by `\n`. @internal */
export function countLines(source: string): number {
  let lines = 1;
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) lines++;
  return lines;
}
