/**
 * A run's record while it runs and when it ends: the state every phase writes (steps' outputs and
 * records, the first failure), the saves (at most one every {@link PERSIST_EVERY_MS} ms, finished
 * steps kept as JSON text), the last check that the record can be stored, and the run's events.
 * The base of `Execution` (`run.ts`).
 * @module
 */
import type { Plan, RunServices } from './plan-types.js';
import type { RunError, RunEvent, RunRecord, StepRecord } from './record.js';
import type { RunTrace } from './tracing.js';
import type { RunOptions } from './run-prepare.js';
import { JsonText, takesJsonText } from '../adapters/json-text.js';
import { isThenable } from './thenable.js';
import { finalOutputProblem, recordTooLarge, stepsTooLarge } from './record-size.js';
import { thrownText } from './run-errors.js';

const PERSIST_EVERY_MS = 250;

/**
 * Most finished steps serialized in one `JSON.stringify`: V8 takes about half as long a record in
 * texts of 50 or 100 records as in one text of 1,000 (0.56 against 1.0 us a record of a no-op step).
 */
export const STEPS_PER_TEXT = 50;

/**
 * The first layer of a run's execution: its record, its saves and its events. The layers above it
 * (attempts, schedule, `Execution`) read and write its state directly. @internal
 */
export abstract class RecordedRun {
  readonly id: string;
  /** The engine's services. @internal */
  readonly services: RunServices;
  protected readonly plan: Plan;
  protected readonly input: unknown;
  protected readonly emit: ((event: RunEvent) => void) | undefined;
  protected outputs: unknown[];
  protected skipped: boolean[];
  protected records: StepRecord[];
  protected startedAt = Date.now();
  #lastPersist = Date.now();
  /** The save in flight, which the next one waits for; undefined when none is. */
  #persisting: Promise<unknown> | undefined;
  /**
   * True while the steps that start at once are started (the first turn of the scheduler): a save
   * due then is made after it, when a step awaits (no one can read the record before), else at the end.
   */
  protected settingOff = false;
  protected persistDue = false;
  /** The first failure of the run; no step or item starts after it. */
  protected failure: RunError | null = null;
  protected parentId: string | undefined;
  /** The run this one retries, when it does. */
  protected retryOf: string | undefined;
  /** The version of the definition run (a resumed durable run takes it from its record). */
  protected workflowVersion: number | undefined;
  protected persistLater: ReturnType<typeof setTimeout> | undefined;
  /** Whether records are saved with finished steps as {@link JsonText} (see `takesJsonText`). */
  #asText: boolean;
  /** The input's JSON text, made at the first save. */
  #inputText: JsonText | undefined;
  /**
   * Finished steps' records as JSON text, made at the first save after they finished: runs of steps
   * by the index of their first step, to the index after their last.
   */
  #savedSteps = new Map<number, { end: number; text: JsonText }>();
  /** Characters of the finished steps' JSON text made so far (see {@link stepsTooLarge}). */
  #savedChars = 0;
  /** The first step of the next block of steps {@link RecordedRun.textBlock} makes text of. */
  protected textFrom = 0;
  protected finished = false;
  protected trace: RunTrace | undefined;

  constructor(
    plan: Plan,
    input: unknown,
    services: RunServices,
    options: RunOptions,
    parentId: string | undefined,
    id: string,
  ) {
    this.id = id;
    this.parentId = parentId;
    this.plan = plan;
    this.workflowVersion = plan.version;
    this.services = services;
    // Only storages that write JsonText themselves (not their subclasses, which may read records).
    this.#asText = takesJsonText(services.storage);
    this.input = input;
    this.emit = options.onEvent;
    const count = plan.steps.length;
    this.outputs = new Array<unknown>(count).fill(null);
    this.skipped = new Array<boolean>(count).fill(false);
    // A step's record is made when it starts (see recordOf): in a long run, it is then at hand.
    this.records = new Array<StepRecord>(count).fill(PENDING);
  }

  /** The run's workflow. @internal */
  get workflowName(): string {
    return this.plan.workflow.name;
  }

  /** The record of the step at `index`, made now when the step has none yet (it had not started). */
  protected recordOf(index: number): StepRecord {
    let record = this.records[index]!;
    if (record === PENDING)
      this.records[index] = record = {
        name: this.plan.steps[index]!.step.name,
        status: 'pending',
        attempts: 0,
        started_at: null,
        finished_at: null,
        output: null,
        error: null,
      };
    return record;
  }

  protected indexOf(name: string): number {
    return this.plan.indexByName.get(name) ?? -1;
  }

  protected event(event: RunEvent): void {
    if (!this.emit) return;
    try {
      this.emit(event);
    } catch {
      // A listener's error must not break the run.
    }
  }

  protected maybePersist(now: number): void {
    if (this.finished) return;
    if (this.settingOff) {
      this.persistDue = true;
      return;
    }
    const since = now - this.#lastPersist;
    if (since < PERSIST_EVERY_MS) {
      // A change inside the interval is written at its end: the stored record (and the pictures of
      // it) is never more than the interval behind the run.
      this.persistLater ??= setTimeout(() => {
        this.persistLater = undefined;
        this.maybePersist(Date.now());
      }, PERSIST_EVERY_MS - since);
      return;
    }
    this.#lastPersist = now;
    this.persist('running', null, null, false);
  }

  /**
   * Saves the run record. On storage that takes JSON text (in memory, Postgres) each finished step's record, and the input, go as
   * {@link JsonText} made at their first save and written as they are by every later one, so a save
   * serializes only the running steps, and a large output once (see `json-text.ts`).
   */
  protected persist(
    status: RunRecord['status'],
    output: unknown,
    error: RunError | null,
    wait: boolean,
    finished?: number,
  ): Promise<unknown> | undefined {
    let stored: RunRecord | undefined;
    let failed: unknown;
    try {
      stored = this.#asText
        ? this.record(
            status,
            output,
            error,
            finished,
            (this.#inputText ??= JsonText.of(this.input)),
            this.#stepsAsText(),
          )
        : this.record(status, output, error, finished, this.input, this.#steps());
    } catch (error) {
      // A value JSON cannot hold (a BigInt, a cycle) fails the save, as the storage's own would.
      failed = error;
    }
    const storage = this.services.storage;
    const previous = this.#persisting;
    if (previous === undefined) {
      // No save in flight: this one is made now, and a storage that writes at once (in memory) is
      // done here, with no promise to wait for.
      let result: unknown;
      try {
        if (stored === undefined) throw failed;
        result = storage.put('runs', this.id, stored);
      } catch (error) {
        return wait ? Promise.reject(error as Error) : undefined;
      }
      return isThenable(result) ? this.#inFlight(Promise.resolve(result), wait) : undefined;
    }
    const write = previous.then(() =>
      stored ? storage.put('runs', this.id, stored) : Promise.reject(failed as Error),
    );
    return this.#inFlight(write, wait);
  }

  /** Keeps the next save behind `write`; returns `write` to a caller that waits for it. */
  #inFlight(write: Promise<unknown>, wait: boolean): Promise<unknown> | undefined {
    const settled = write.then(noop, noop);
    this.#persisting = settled;
    void settled.then(() => {
      if (this.#persisting === settled) this.#persisting = undefined;
    });
    return wait ? write : undefined;
  }

  /**
   * Checks that the run record can be saved before its last save: on storage that takes JSON text,
   * the finished steps and the workflow's output are serialized here, once, and the save then writes
   * that text (`text`). When JSON cannot hold a step's output (a BigInt, a value that holds itself: a
   * custom action may return one), that step is marked failed with code `invalid_output`, its output
   * dropped, and the run's error is returned (`failure`). Storage of other kinds serializes records
   * itself and is not checked here.
   */
  protected storable(output: unknown): { text: JsonText } | { failure: RunError } | Record<string, never> {
    if (!this.#asText) return {};
    try {
      this.#stepsAsText();
      // Without workflow_output the output is the map of the steps' outputs, about as large again as
      // their saved records: only a workflow_output (its references may repeat a value) is walked.
      const problem = finalOutputProblem(output, this.#savedChars, this.plan.output !== undefined);
      if (problem?.code !== 'too_large') {
        if (problem)
          return { failure: { code: problem.code, message: `workflow_output: ${problem.message}` } };
        return { text: JsonText.of(output) };
      }
      // Too large as a whole: the record keeps the steps without their outputs.
      this.records.forEach((record, index) => {
        if (record.output === null) return;
        record.output = null;
        this.unsave(index);
      });
      this.#savedChars = 0;
      return { failure: recordTooLarge() };
    } catch {
      // Found below, step by step.
    }
    let first: RunError | undefined;
    this.records.forEach((record, index) => {
      try {
        JSON.stringify(record);
      } catch (error) {
        const problem: RunError = {
          code: 'invalid_output',
          message: `step "${record.name}" failed: its output cannot be stored as JSON (${thrownText(error).split('\n')[0]})`,
          step: record.name,
        };
        record.status = 'failed';
        record.output = null;
        record.error = problem;
        this.unsave(index);
        first ??= problem;
      }
    });
    return {
      failure: first ?? {
        code: 'invalid_output',
        message: 'workflow_output: the workflow output cannot be stored as JSON',
      },
    };
  }

  /** A run record of the run as it is; `steps` may hold JsonText standing for steps' records, when saved. */
  protected record(
    status: RunRecord['status'],
    output: unknown,
    error: RunError | null,
    finished: number | undefined,
    input: unknown,
    steps: (StepRecord | JsonText)[],
  ): RunRecord {
    return {
      id: this.id,
      workflow: this.plan.workflow.name,
      status,
      input,
      output,
      error,
      started_at: iso(this.startedAt),
      finished_at: finished === undefined ? null : iso(finished),
      steps: steps as StepRecord[],
      ...(this.parentId === undefined ? {} : { parent_run_id: this.parentId }),
      ...(this.retryOf === undefined ? {} : { retry_of: this.retryOf }),
      ...(this.workflowVersion === undefined ? {} : { workflow_version: this.workflowVersion }),
      ...(this.services.initiator === undefined ? {} : { initiator: this.services.initiator }),
      ...(this.trace?.traceparent ? { traceparent: this.trace.traceparent } : {}),
    };
  }

  /** Copies of the records of the steps that ran or were skipped: steps that never started are left out. */
  #steps(): StepRecord[] {
    return this.records.filter((s) => s.status !== 'pending').map(copyStep);
  }

  /**
   * {@link RecordedRun.#steps} with the finished steps' records as {@link JsonText}: each run of
   * finished steps not saved before is serialized in one go, and kept for every later save.
   */
  #stepsAsText(): (StepRecord | JsonText)[] {
    const steps: (StepRecord | JsonText)[] = [];
    const records = this.records;
    const saved = this.#savedSteps;
    for (let i = 0; i < records.length;) {
      const done = saved.get(i);
      if (done) {
        steps.push(done.text);
        i = done.end;
        continue;
      }
      const status = records[i]!.status;
      if (status === 'running' || status === 'waiting') steps.push(copyStep(records[i]!));
      if (status === 'pending' || status === 'running' || status === 'waiting') {
        i += 1;
        continue;
      }
      let end = i + 1;
      while (end < records.length && end - i < STEPS_PER_TEXT && !saved.has(end) && isFinished(records[end]!))
        end += 1;
      const text = new JsonText(records.slice(i, end));
      saved.set(i, { end, text });
      this.#savedChars += text.text.length;
      // A record past what JSON text can hold could never be saved: no further step starts.
      if (stepsTooLarge(this.#savedChars) && this.failure === null) this.failure = recordTooLarge();
      steps.push(text);
      i = end;
    }
    return steps;
  }

  /**
   * The records of the {@link STEPS_PER_TEXT} steps from `textFrom` as JSON text, made when the
   * last of them finishes, while they are at hand (in a long run, by the next save they are out of
   * the processor's caches), and kept for every save (see {@link RecordedRun.#stepsAsText}). Left to
   * the save when one of them has not finished, or JSON cannot hold one.
   */
  protected textBlock(): void {
    const from = this.textFrom;
    const end = from + STEPS_PER_TEXT;
    this.textFrom = end;
    const records = this.records;
    if (!this.#asText) return;
    for (let i = from; i < end; i++) if (!isFinished(records[i]!)) return;
    // A save may have made text of some of them already.
    for (const [start, saved] of this.#savedSteps) if (start < end && saved.end > from) return;
    let text: JsonText;
    try {
      text = new JsonText(records.slice(from, end));
    } catch {
      return;
    }
    this.#savedSteps.set(from, { end, text });
    this.#savedChars += text.text.length;
    if (stepsTooLarge(this.#savedChars) && this.failure === null) this.failure = recordTooLarge();
  }

  /** Forgets the saved text holding the step at `index` (its record changed after it finished). */
  protected unsave(index: number): void {
    for (const [start, { end }] of this.#savedSteps)
      if (start <= index && index < end) this.#savedSteps.delete(start);
  }
}

function noop(): void {}

/** What the record of every step that has not started holds: only its status is ever read. */
const PENDING: StepRecord = Object.freeze({
  name: '',
  status: 'pending',
  attempts: 0,
  started_at: null,
  finished_at: null,
  output: null,
  error: null,
}) as StepRecord;

/** Whether a step started or was skipped: the record lists only those. */
export function isStarted(step: StepRecord): boolean {
  return step.status !== 'pending';
}

function isFinished(step: StepRecord): boolean {
  return step.status === 'succeeded' || step.status === 'failed' || step.status === 'skipped';
}

/** A copy of a step record that its later changes (status, times, item counts) do not reach. */
function copyStep(step: StepRecord): StepRecord {
  return step.items ? { ...step, items: { ...step.items, failures: [...step.items.failures] } } : { ...step };
}

let lastMs = -1;
let lastIso = '';

/** ISO time of `ms`; steps finishing within the same millisecond share one string. */
export function iso(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
