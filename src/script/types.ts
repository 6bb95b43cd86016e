/**
 * Types of the transform-script sandbox: what a run receives and what it returns.
 * @module
 */

/**
 * The cells of one column as the catalog holds them: numbers in a `Float64Array` (NaN for an empty
 * cell), booleans in a `Uint8Array` (0 false, 1 true, 2 empty), text as an array of `string | null`.
 */
export type ColumnCells = Float64Array | Uint8Array | readonly (string | null)[];

/** One input entity: its columns, and its rows as arrays of cell values. */
export interface EntityData {
  /** Columns in order; `name` keys the row objects the script sees. */
  columns: readonly { name: string; type: string }[];
  /**
   * Rows, each an array of cell values in column order. Where `data` is given, `rows` is made from it
   * on first read and is not enumerable, so it never crosses a worker boundary.
   */
  rows: readonly (readonly unknown[])[];
  /**
   * The same cells column by column, as the catalog gives them (entities read from their sheet);
   * sandboxes read these rather than `rows` when they are there. Only the first `length` count.
   */
  data?: readonly ColumnCells[];
  /** Number of rows, with `data`. */
  length?: number;
}

/** Bounds of one script run. */
export interface ScriptLimits {
  /** Wall-clock time of the run in milliseconds (default 5000). */
  timeoutMs: number;
  /** Memory of the script's heap in bytes, inputs included (default 64 MiB). */
  memoryBytes: number;
  /** Stack of the script in bytes (default 1 MiB). */
  stackBytes: number;
  /**
   * Total size the script may write across all `writeEntity` calls (default 16 MiB): characters of
   * JSON, plus 8 bytes per number and 4 per string index for rows packed by column.
   */
  maxOutputBytes: number;
  /** Total characters of `console` output kept; the rest is dropped with a note (default 64 KiB). */
  maxLogBytes?: number;
}

/** Everything one script run needs. */
export interface ScriptInput {
  /** JavaScript source, run as a classic script (not a module). */
  source: string;
  /** Name of the script in error messages and stack traces, e.g. the step's `code_file` (default `script.js`). */
  filename?: string;
  /** Input entities by name; `getEntity(name)` reads them. */
  inputs: Readonly<Record<string, EntityData>>;
  /** Names of the output entities `writeEntity(name, rows)` may write. */
  outputs: readonly string[];
  /** Time, memory, stack and size bounds. */
  limits: ScriptLimits;
  /** Cancels the run; the sandbox rejects with a `CancelledError`. */
  signal?: AbortSignal;
}

/** What a successful run wrote and logged. */
export interface ScriptResult {
  /** Rows written per output entity, in call order, as objects keyed by column name. */
  writes: Record<string, Record<string, unknown>[]>;
  /** `console` lines, `warn` and `error` lines prefixed with `[warn] ` and `[error] `. */
  logs: string[];
}

/** Runs an untrusted transform script with no host access. */
export interface ScriptSandbox {
  /** Runs the script once in a fresh runtime; rejects with `ScriptError`, `LimitError` or `CancelledError`. */
  run(input: ScriptInput): Promise<ScriptResult>;
}

/** The defaults of {@link ScriptLimits}: 5 s, 64 MiB heap, 1 MiB stack, 16 MiB output, 64 KiB logs. */
export const DEFAULT_SCRIPT_LIMITS: Readonly<Required<ScriptLimits>> = Object.freeze({
  timeoutMs: 5000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 1024 * 1024,
  maxOutputBytes: 16 * 1024 * 1024,
  maxLogBytes: 64 * 1024,
});
