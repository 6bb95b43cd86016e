/**
 * Run keys: a caller names a start (`{ key }`, or an `Idempotency-Key` header), and every later start
 * of the same workflow with that key gets the run the first one started instead of a new run.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import { StepwireError, ValidationError } from '../errors/index.js';
import type { RunEvent, RunRecord } from './record.js';
import { interruptedRecord } from './interrupted.js';
import { LONE_SURROGATE, holdsLoneSurrogate } from '../schema/well-formed.js';

/** Longest run key. */
export const RUN_KEY_MAX = 255;

/** What storage keeps per used key. @internal */
export interface StoredRunKey {
  run_id: string;
  workflow: string;
  key: string;
  /** When the key was claimed. */
  at: string;
  /** The time limit of the run it started, in ms (missing in keys stored before it was kept). */
  timeout_ms?: number;
}

/**
 * How long past its time limit a run of another engine, not on a queue, may still show `running`
 * before a start replaying it takes its engine for stopped: a live engine ends a run at its limit
 * and saves the record at once.
 */
const SAVE_GRACE_MS = 10_000;

/**
 * The key space of a trigger's runs: its name and its `created_at`, so a trigger created again under
 * a deleted one's name starts afresh (a webhook delivery's `Idempotency-Key` the deleted trigger
 * used starts a new run, not the deleted trigger's). @internal
 */
export function triggerKeySpace(trigger: { name: string; created_at: string }): string {
  return `${trigger.name}\u0001${trigger.created_at}`;
}

/** Statuses of a run that has not ended yet. */
const UNFINISHED = new Set(['queued', 'running']);

/** The runs keys started, in this engine and in others on the same storage. @internal */
export class RunKeys {
  readonly #storage: StorageAdapter;
  readonly #timeoutMs: number;
  /** Results of the keyed runs this engine is running now, by run id. */
  readonly #live = new Map<string, Promise<RunRecord>>();
  /** Set by {@link RunKeys.close}: runs still waited for stop being waited for. */
  #closed = false;

  constructor(storage: StorageAdapter, timeoutMs: number) {
    this.#storage = storage;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Claims `key` of `workflow` for run `runId`, whose time limit is `timeoutMs`; resolves with what
   * an earlier start stored when it claimed the key first, else undefined (the caller runs `runId`).
   * The keys of each trigger (`trigger`, its {@link triggerKeySpace}) have a space of their own: they
   * are stored under a name with a control character (U+0001, which Postgres text can hold, unlike
   * U+0000), which no caller's key may hold.
   * @throws {@link ValidationError} naming `key` when it is empty, too long, has control characters
   *   or half of a surrogate pair.
   */
  async claim(
    workflow: string,
    key: unknown,
    runId: string,
    timeoutMs: number,
    trigger?: string,
  ): Promise<StoredRunKey | undefined> {
    checkKey(key);
    const where = trigger === undefined ? `${workflow}/${key}` : `${workflow}/\u0001${trigger}/${key}`;
    const stored: StoredRunKey = {
      run_id: runId,
      workflow,
      key,
      at: new Date().toISOString(),
      timeout_ms: timeoutMs,
    };
    if (await this.#storage.put('run_keys', where, stored, { ifAbsent: true })) return undefined;
    return (await this.#storage.get<StoredRunKey>('run_keys', where)) ?? stored;
  }

  /** Remembers a keyed run this engine is running, so a start with the same key waits for it. */
  track(runId: string, result: Promise<RunRecord>): void {
    this.#live.set(runId, result);
    const forget = () => this.#live.delete(runId);
    result.then(forget, forget);
  }

  /**
   * The run an earlier start with the key began, as a handle: no events, its record when it ends.
   * `follow` (a queue's) follows a durable run wherever it executes, once its record is stored.
   */
  replay(
    earlier: StoredRunKey,
    follow?: (runId: string) => Promise<RunRecord>,
  ): { id: string; events: AsyncIterable<RunEvent>; result: Promise<RunRecord> } {
    const result = this.#live.get(earlier.run_id) ?? this.#ended(earlier, follow);
    return { id: earlier.run_id, events: { async *[Symbol.asyncIterator]() {} }, result };
  }

  /** Stops waiting for runs other engines run: each wait rejects with a `StepwireError` `closed`. */
  close(): void {
    this.#closed = true;
  }

  /**
   * Waits for a run another engine started (or is still storing) to end, as the first start's result
   * would. A run whose record does not appear within the time a run may take was never stored (its
   * engine died first): `run_key_lost`. A durable run is followed wherever it executes. A run not on
   * a queue still `running` past its time limit (and a grace for the save) lost its engine: it is
   * marked `interrupted`, as a new engine marks the runs it finds running.
   */
  async #ended(earlier: StoredRunKey, follow?: (runId: string) => Promise<RunRecord>): Promise<RunRecord> {
    const runId = earlier.run_id;
    const deadline = Date.now() + this.#timeoutMs;
    const stale = Date.parse(earlier.at) + (earlier.timeout_ms ?? this.#timeoutMs) + SAVE_GRACE_MS;
    for (let wait = 20; ; wait = Math.min(wait * 2, 1000)) {
      if (this.#closed)
        throw new StepwireError(
          'closed',
          `the engine was closed while it waited for run ${runId}, which its run key names; read it with getRun`,
        );
      const record = await this.#storage.get<RunRecord>('runs', runId);
      if (record && !UNFINISHED.has(record.status)) return record;
      if (record && follow) return follow(runId);
      if (record && Date.now() > stale) {
        const ended = interruptedRecord(record, 'the engine running this run');
        await this.#storage.put('runs', runId, ended);
        return ended;
      }
      if (!record && Date.now() > deadline) {
        throw new ValidationError([
          {
            code: 'run_key_lost',
            path: 'key',
            message: `the run this key started (${runId}) was never stored`,
          },
        ]);
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/**
 * A run key is 1 to 255 characters (code points), none a control character (C0, DEL, C1) nor half
 * of a surrogate pair: storage that keeps text as UTF-8 (Postgres) would turn every lone surrogate
 * into U+FFFD, so two different keys would name one run.
 */
function checkKey(key: unknown): asserts key is string {
  const problem = runKeyProblem(key);
  if (problem)
    throw new ValidationError([{ code: 'invalid_key', path: 'key', message: `the run key ${problem}` }]);
}

/** What is wrong with `key` as a run key (`must have 1 to 255 characters`), or undefined. @internal */
export function runKeyProblem(key: unknown): string | undefined {
  return typeof key !== 'string'
    ? 'must be a string'
    : key.length === 0 || key.length > 2 * RUN_KEY_MAX || codePoints(key) > RUN_KEY_MAX
      ? `must have 1 to ${RUN_KEY_MAX} characters`
      : /\p{Cc}/u.test(key)
        ? 'must not hold control characters'
        : holdsLoneSurrogate(key)
          ? LONE_SURROGATE
          : undefined;
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
