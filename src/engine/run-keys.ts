/**
 * Run keys: a caller names a start (`{ key }`, or an `Idempotency-Key` header), and every later start
 * of the same workflow with that key gets the run the first one started instead of a new run.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import { StepwireError, ValidationError } from '../errors/index.js';
import type { RunEvent, RunRecord } from './record.js';

/** Longest run key. */
export const RUN_KEY_MAX = 255;

/** What storage keeps per used key. */
interface StoredRunKey {
  run_id: string;
  workflow: string;
  key: string;
  at: string;
}

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
   * Claims `key` of `workflow` for run `runId`; resolves with the id of the run that holds the key when
   * an earlier start claimed it, else undefined (the caller runs `runId`). The keys of each trigger
   * (`trigger`, its {@link triggerKeySpace}) have a space of their own: they are stored under a name
   * with a control character (U+0001, which Postgres text can hold, unlike U+0000), which no caller's
   * key may hold.
   * @throws {@link ValidationError} naming `key` when it is empty, too long or has control characters.
   */
  async claim(workflow: string, key: unknown, runId: string, trigger?: string): Promise<string | undefined> {
    checkKey(key);
    const where = trigger === undefined ? `${workflow}/${key}` : `${workflow}/\u0001${trigger}/${key}`;
    const stored: StoredRunKey = { run_id: runId, workflow, key, at: new Date().toISOString() };
    if (await this.#storage.put('run_keys', where, stored, { ifAbsent: true })) return undefined;
    const earlier = await this.#storage.get<StoredRunKey>('run_keys', where);
    return earlier?.run_id ?? runId;
  }

  /** Remembers a keyed run this engine is running, so a start with the same key waits for it. */
  track(runId: string, result: Promise<RunRecord>): void {
    this.#live.set(runId, result);
    const forget = () => this.#live.delete(runId);
    result.then(forget, forget);
  }

  /** The run an earlier start with the key began, as a handle: no events, its record when it ends. */
  replay(runId: string): { id: string; events: AsyncIterable<RunEvent>; result: Promise<RunRecord> } {
    const result = this.#live.get(runId) ?? this.#ended(runId);
    return { id: runId, events: { async *[Symbol.asyncIterator]() {} }, result };
  }

  /** Stops waiting for runs other engines run: each wait rejects with a `StepwireError` `closed`. */
  close(): void {
    this.#closed = true;
  }

  /** Waits for a run another engine started (or is still storing) to end, no longer than a run may take. */
  async #ended(runId: string): Promise<RunRecord> {
    const deadline = Date.now() + this.#timeoutMs;
    for (let wait = 20; ; wait = Math.min(wait * 2, 1000)) {
      if (this.#closed)
        throw new StepwireError(
          'closed',
          `the engine was closed while it waited for run ${runId}, which its run key names; read it with getRun`,
        );
      const record = await this.#storage.get<RunRecord>('runs', runId);
      if (record && !UNFINISHED.has(record.status)) return record;
      if (Date.now() > deadline) {
        if (record) return record;
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

function checkKey(key: unknown): asserts key is string {
  const problem =
    typeof key !== 'string'
      ? 'must be a string'
      : key.length === 0 || key.length > RUN_KEY_MAX
        ? `must have 1 to ${RUN_KEY_MAX} characters`
        : // eslint-disable-next-line no-control-regex
          /[\u0000-\u001f\u007f]/.test(key)
          ? 'must not hold control characters'
          : undefined;
  if (problem)
    throw new ValidationError([{ code: 'invalid_key', path: 'key', message: `the run key ${problem}` }]);
}
