/**
 * What a run is prepared with before its first step: its options, checked once at the start (a
 * `TypeError` names a wrong one), and the scope its references read the input and steps' outputs in.
 *
 * @module
 */
import type { Plan } from './plan-types.js';
import type { Scope } from './references.js';
import type { RunEvent } from './record.js';
import type { Principal } from '../access/principal.js';

/** The key of {@link RunOptions} under which `engine.as(p)` and triggers pass a run's initiator. @internal */
export const INITIATOR: unique symbol = Symbol('stepwire.initiator');

/** Options of one run. */
export interface RunOptions {
  /** Cancels the run: no further step starts, and running steps are told to stop. */
  signal?: AbortSignal;
  /**
   * Called with every event of the run, in order, while it runs. An error it throws is ignored:
   * the run and `handle.events` go on with every event.
   */
  onEvent?: (event: RunEvent) => void;
  /** Time the whole run may take, in ms. @default limits.runTimeoutMs */
  timeoutMs?: number;
  /** Independent steps that may run at once. @default limits.stepConcurrency */
  concurrency?: number;
  /**
   * A run key: the first start with a key runs the workflow; every later start of the same workflow
   * with that key gets that run (its record), whatever the input, also across engines on one storage.
   */
  key?: string;
  /**
   * The trigger that starts the run: its keys (`key`) are kept apart from callers' keys, so a key a
   * caller picks can never match one a webhook delivery or a schedule slot uses. @internal
   */
  trigger?: string;
  /**
   * W3C `traceparent` of the request that started the run: the run's OpenTelemetry span becomes its
   * child. Without it the span is a child of the active context.
   */
  traceparent?: string | undefined;
  /** Who starts the run (`engine.as(p)`, a trigger): kept in its record; its steps act as it. @internal */
  [INITIATOR]?: Principal | undefined;
}

/** Checks the options of a run; a `TypeError` names the one that is wrong. @internal */
export function checkRunOptions(options: RunOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`run options must be an object, got ${options === null ? 'null' : typeof options}`);
  const { timeoutMs, concurrency, signal, onEvent, traceparent } = options;
  if (onEvent !== undefined && typeof onEvent !== 'function')
    throw new TypeError(`onEvent must be a function, got ${describeOption(onEvent)}`);
  if (traceparent !== undefined && typeof traceparent !== 'string')
    throw new TypeError(
      `traceparent must be a string (a W3C traceparent header), got ${describeOption(traceparent)}`,
    );
  // Checked before anything is stored: a run that could not listen to its signal would stay `running`.
  if (
    signal !== undefined &&
    !(
      typeof signal === 'object' &&
      signal !== null &&
      typeof (signal as Partial<AbortSignal>).aborted === 'boolean' &&
      typeof (signal as Partial<AbortSignal>).addEventListener === 'function'
    )
  )
    throw new TypeError(
      `signal must be an AbortSignal (an AbortController's .signal), got ${describeOption(signal)}`,
    );
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))
  )
    throw new TypeError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1))
    throw new TypeError(`concurrency must be a whole number from 1 on, got ${String(concurrency)}`);
}

/** An option's value as an error names it: `null`, `an AbortController`, `a string`. */
function describeOption(value: unknown): string {
  if (value === null) return 'null';
  const name =
    typeof value !== 'object'
      ? typeof value
      : (value as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof name !== 'string' || name === '' || name === 'Object') return 'an object';
  return `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`;
}

/** Looks up step outputs and the input for references: one per run. @internal */
export class RunScope implements Scope {
  readonly #plan: Plan;
  readonly #input: unknown;
  readonly #outputs: readonly unknown[];
  readonly #skipped: readonly boolean[];

  constructor(plan: Plan, input: unknown, outputs: readonly unknown[], skipped: readonly boolean[]) {
    this.#plan = plan;
    this.#input = input;
    this.#outputs = outputs;
    this.#skipped = skipped;
  }

  value(root: string, step?: number): unknown {
    if (step !== undefined) return this.#outputs[step];
    return root === this.#plan.inputName
      ? this.#input
      : this.#outputs[this.#plan.indexByName.get(root) ?? -1];
  }

  skipped(root: string): boolean {
    return root !== this.#plan.inputName && this.#skipped[this.#plan.indexByName.get(root) ?? -1] === true;
  }
}
