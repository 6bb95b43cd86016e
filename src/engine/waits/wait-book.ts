/**
 * The waits of human steps, kept in the engine's storage: what each wait waits for, and its
 * answers. Answers go into numbered slots claimed with `ifAbsent`, so a decision, an event and a
 * timeout are each committed once and the first to end a wait wins whatever process sends it;
 * every later one is refused with `conflict`. Events sent before a wait began are kept and
 * matched when it begins.
 * @module
 */
import { NotFoundError, StepwireError } from '../../errors/index.js';
import type { StorageAdapter } from '../../adapters/types.js';
import type { RunInitiator } from '../../schema/run-record-types.js';
import type { ApprovalWait, EventWait, WaitData } from '../../schema/index.js';
import { derivedUuid } from '../../bytes/derived-uuid.js';
import { jsonEqual } from '../step-data.js';

/** How long an event no wait took is kept for a wait that begins later, by default: 24 hours. */
export const EVENT_RETENTION_MS = 24 * 3600 * 1000;

/** A wait as stored: what it waits for, where, and how it ended. */
export interface WaitRecord {
  /** The wait's id (an approval's id). */
  id: string;
  kind: WaitData['kind'];
  run_id: string;
  workflow: string;
  step: string;
  /** The item of a `for_each` step the wait belongs to. */
  item?: number;
  /** `waiting` until an answer, an event or the time ends it. */
  status: 'waiting' | 'resolved';
  began_at: string;
  /** When the wait times out (a timer: when it ends). */
  due_at?: string;
  /** Who started the run (an approval's `self_approval` rule reads it). */
  initiator?: RunInitiator;
  /** An approval's title, description, assignees, required count, form, values shown. */
  approval?: Omit<ApprovalWait, 'kind' | 'timeout_seconds' | 'notify'>;
  /** An event wait's event name and the fields the payload must match (references resolved). */
  event?: Pick<EventWait, 'event' | 'match'>;
  /** What ends a wait that times out: `fail` (the step fails) or `continue`. */
  on_timeout?: 'fail' | 'continue';
  resolved_at?: string;
}

/** One decision on an approval. */
export interface Decision {
  /** Who decided: a principal id, or `link:<e-mail>` for a signed link. */
  by: string;
  /** Their name or e-mail address, when known (what pages show). */
  name?: string;
  at: string;
  approved: boolean;
  comment?: string;
  /** The answers of the approval's form. */
  data?: unknown;
}

/** An answer in a wait's slot. */
export type WaitAnswer =
  | ({ kind: 'decision' } & Decision)
  | { kind: 'event'; at: string; payload: unknown; event_id: string }
  | { kind: 'timeout'; at: string }
  | { kind: 'timer'; at: string };

/** How a wait ended: the step's output, or its failure when it timed out under `on_timeout: fail`. */
export type WaitEnd = { output: unknown } | { failure: StepwireError };

/** An event as kept for waits that begin later. */
interface KeptEvent {
  id: string;
  event: string;
  payload: unknown;
  sent_at: string;
  /** The wait that took it, once one did. */
  taken_by?: string;
}

/** What to begin a wait with. @internal */
export interface WaitStart {
  run_id: string;
  workflow: string;
  step: string;
  item?: number | undefined;
  initiator?: RunInitiator | undefined;
  /** The step's `wait_data`, references resolved. */
  data: WaitData;
}

/** A wait begun or found: its record, and how it ended when it has. @internal */
export interface WaitState {
  record: WaitRecord;
  end?: WaitEnd;
  /** True when this call stored the wait (it was not there before): notify then, once. */
  created: boolean;
}

/** Most answers a wait holds: `required` approvals at most 100, and the one that ends it. */
const MAX_SLOTS = 101;

/** The waits of human steps in a storage. @internal */
export class WaitBook {
  readonly #storage: StorageAdapter;
  readonly #eventRetentionMs: number;

  constructor(storage: StorageAdapter, eventRetentionMs = EVENT_RETENTION_MS) {
    this.#storage = storage;
    this.#eventRetentionMs = eventRetentionMs;
  }

  /**
   * Begins the wait of a step execution, or finds it begun: a step delivered again finds the
   * same wait. A new event wait takes the oldest kept event it matches.
   */
  async begin(start: WaitStart, now = Date.now()): Promise<WaitState> {
    const id = await waitId(start.run_id, start.step, start.item);
    let record = await this.#storage.get<WaitRecord>('waits', id);
    let created = false;
    if (!record) {
      const fresh = newRecord(id, start, now);
      created = await this.#storage.put('waits', id, fresh, { ifAbsent: true });
      record = created ? fresh : ((await this.#storage.get<WaitRecord>('waits', id)) ?? fresh);
      if (created)
        await this.#storage.put('open_waits', openKey(fresh), { id, due_at: fresh.due_at ?? null });
      if (created && fresh.kind === 'event') await this.#takeKeptEvent(fresh, now);
    }
    let end = await this.#end(record);
    if (!end && record.due_at !== undefined && Date.parse(record.due_at) <= now) {
      const answer: WaitAnswer =
        record.kind === 'timer' ? { kind: 'timer', at: iso(now) } : { kind: 'timeout', at: iso(now) };
      await this.#claim(record, answer);
      end = await this.#end(record);
    }
    if (end && record.status !== 'resolved') record = await this.#resolved(record, now);
    return { record, ...(end ? { end } : {}), created };
  }

  /** A wait by id. @throws {@link NotFoundError} when there is none. */
  async get(id: string): Promise<WaitRecord> {
    const record =
      typeof id === 'string' && id !== '' ? await this.#storage.get<WaitRecord>('waits', id) : undefined;
    if (!record) throw new NotFoundError('approval', id);
    return record;
  }

  /** The answers a wait holds so far, in the order they came. */
  async answers(id: string): Promise<WaitAnswer[]> {
    const answers: WaitAnswer[] = [];
    for (let n = 1; n <= MAX_SLOTS; n++) {
      const answer = await this.#storage.get<WaitAnswer>('wait_slots', slotKey(id, n));
      if (!answer) break;
      answers.push(answer);
    }
    return answers;
  }

  /** How a wait ended, from its record and answers, or undefined while it waits. */
  async end(record: WaitRecord): Promise<WaitEnd | undefined> {
    return this.#end(record);
  }

  /** The waits not ended yet (of one kind), oldest first. */
  async open(kind?: WaitData['kind']): Promise<WaitRecord[]> {
    const entries = await this.#storage.list<{ id: string }>('open_waits');
    const prefix = kind === undefined ? '' : `${kind}/`;
    const records: WaitRecord[] = [];
    for (const { key, value } of entries) {
      if (!key.startsWith(prefix)) continue;
      const record = await this.#storage.get<WaitRecord>('waits', value.id);
      if (record && record.status === 'waiting') records.push(record);
    }
    return records.sort((a, b) => a.began_at.localeCompare(b.began_at) || a.id.localeCompare(b.id));
  }

  /**
   * Adds a decision to an approval. Resolves to the wait's end when this decision ended it (a
   * rejection, or the last approval needed), else undefined.
   * @throws a `StepwireError` `conflict` when the wait has ended (decided, timed out) or `by` has
   *   decided it already.
   */
  async decide(record: WaitRecord, decision: Decision): Promise<WaitEnd | undefined> {
    await this.#claim(record, { kind: 'decision', ...decision }, (earlier) =>
      earlier.some((a) => a.kind === 'decision' && a.by === decision.by)
        ? `${decision.by} has decided this approval already`
        : undefined,
    );
    const end = await this.#end(record);
    if (end) await this.#resolved(record, Date.now());
    return end;
  }

  /**
   * Sends an event: every event wait waiting for it whose `match` the payload has takes it; when
   * none does, it is kept for a wait that begins within the retention time. Resolves to the
   * event's id and the waits it ended.
   */
  async send(
    event: string,
    payload: unknown,
    now = Date.now(),
  ): Promise<{ id: string; ended: WaitRecord[] }> {
    const id = globalThis.crypto.randomUUID();
    const kept: KeptEvent = { id, event, payload, sent_at: iso(now) };
    // Kept first, then matched: a wait that begins meanwhile finds it, or is found by it.
    const key = `${event}/${kept.sent_at}/${id}`;
    await this.#storage.put('wait_events', key, kept);
    await this.#dropExpired(event, now);
    const ended: WaitRecord[] = [];
    for (const record of await this.open('event')) {
      if (record.event?.event !== event || !matches(record.event.match, payload)) continue;
      const answer: WaitAnswer = { kind: 'event', at: iso(now), payload, event_id: id };
      try {
        await this.#claim(record, answer);
      } catch (error) {
        if (error instanceof StepwireError && error.code === 'conflict') continue;
        throw error;
      }
      await this.#resolved(record, now);
      ended.push(record);
    }
    if (ended.length > 0) await this.#storage.put('wait_events', key, { ...kept, taken_by: ended[0]!.id });
    return { id, ended };
  }

  /** Times out a wait whose time has come (or ends a timer); its end, or undefined when it had ended. */
  async expire(record: WaitRecord, now = Date.now()): Promise<WaitEnd | undefined> {
    if (record.due_at === undefined || Date.parse(record.due_at) > now) return undefined;
    const answer: WaitAnswer =
      record.kind === 'timer' ? { kind: 'timer', at: iso(now) } : { kind: 'timeout', at: iso(now) };
    try {
      await this.#claim(record, answer);
    } catch (error) {
      if (error instanceof StepwireError && error.code === 'conflict') return undefined;
      throw error;
    }
    const end = await this.#end(record);
    if (end) await this.#resolved(record, now);
    return end;
  }

  /**
   * Claims the next free slot of a wait for `answer`. A slot taken meanwhile by someone else is
   * read and the next one tried; `refuse` may refuse the answer given the ones before it.
   * @throws a `StepwireError` `conflict` when the wait has ended, or `refuse` refuses.
   */
  async #claim(
    record: WaitRecord,
    answer: WaitAnswer,
    refuse?: (earlier: WaitAnswer[]) => string | undefined,
  ): Promise<WaitAnswer[]> {
    const earlier: WaitAnswer[] = [];
    for (let n = 1; n <= MAX_SLOTS; n++) {
      const key = slotKey(record.id, n);
      let taken = await this.#storage.get<WaitAnswer>('wait_slots', key);
      if (!taken) {
        if (endOf(record, earlier)) break;
        const why = refuse?.(earlier);
        if (why) throw new StepwireError('conflict', why);
        if (await this.#storage.put('wait_slots', key, answer, { ifAbsent: true }))
          return [...earlier, answer];
        taken = await this.#storage.get<WaitAnswer>('wait_slots', key);
        if (!taken) continue;
      }
      earlier.push(taken);
    }
    throw new StepwireError(
      'conflict',
      `${describeWait(record)} has ended already: it takes no further answer`,
    );
  }

  async #end(record: WaitRecord): Promise<WaitEnd | undefined> {
    return endOf(record, await this.answers(record.id));
  }

  async #resolved(record: WaitRecord, now: number): Promise<WaitRecord> {
    const resolved: WaitRecord = { ...record, status: 'resolved', resolved_at: iso(now) };
    await this.#storage.put('waits', record.id, resolved);
    await this.#storage.delete('open_waits', openKey(record));
    return resolved;
  }

  /** A new event wait takes the oldest kept event of its name it matches that no wait took. */
  async #takeKeptEvent(record: WaitRecord, now: number): Promise<void> {
    const name = record.event!.event;
    const since = now - this.#eventRetentionMs;
    for (const { key, value } of await this.#storage.list<KeptEvent>('wait_events')) {
      if (!key.startsWith(`${name}/`) || value.taken_by !== undefined) continue;
      if (Date.parse(value.sent_at) < since || !matches(record.event!.match, value.payload)) continue;
      const answer: WaitAnswer = { kind: 'event', at: iso(now), payload: value.payload, event_id: value.id };
      try {
        await this.#claim(record, answer);
      } catch (error) {
        if (error instanceof StepwireError && error.code === 'conflict') return;
        throw error;
      }
      await this.#storage.put('wait_events', key, { ...value, taken_by: record.id });
      return;
    }
  }

  async #dropExpired(event: string, now: number): Promise<void> {
    const since = now - this.#eventRetentionMs;
    for (const { key, value } of await this.#storage.list<KeptEvent>('wait_events'))
      if (key.startsWith(`${event}/`) && Date.parse(value.sent_at) < since)
        await this.#storage.delete('wait_events', key);
  }
}

/** How a wait ends given its answers in order, or undefined while it waits. @internal */
export function endOf(record: WaitRecord, answers: readonly WaitAnswer[]): WaitEnd | undefined {
  const decisions: Decision[] = [];
  const required = record.approval?.required ?? 1;
  let approvals = 0;
  for (const answer of answers) {
    switch (answer.kind) {
      case 'decision': {
        const { kind: _, ...decision } = answer;
        decisions.push(decision);
        if (!answer.approved) return { output: { approved: false, decisions, timed_out: false } };
        approvals += 1;
        if (approvals >= required) return { output: { approved: true, decisions, timed_out: false } };
        break;
      }
      case 'event':
        return { output: { payload: answer.payload, timed_out: false } };
      case 'timer':
        return { output: { waited_seconds: waitedSeconds(record, answer.at) } };
      case 'timeout': {
        if (record.on_timeout !== 'continue') {
          const seconds = Math.round(waitedSeconds(record, answer.at));
          return {
            failure: new StepwireError(
              'timed_out',
              `${describeWait(record)} was not answered within its ${seconds} s (timeout_seconds)`,
            ),
          };
        }
        return {
          output:
            record.kind === 'approval'
              ? { approved: false, decisions, timed_out: true }
              : { payload: null, timed_out: true },
        };
      }
    }
  }
  return undefined;
}

/** True when `payload` has every field of `match` with an equal value (JSON equality). */
function matches(match: Record<string, unknown> | undefined, payload: unknown): boolean {
  if (match === undefined) return true;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return false;
  return Object.entries(match).every(
    ([field, value]) =>
      Object.hasOwn(payload, field) && jsonEqual((payload as Record<string, unknown>)[field], value),
  );
}

function newRecord(id: string, start: WaitStart, now: number): WaitRecord {
  const data = start.data;
  const record: WaitRecord = {
    id,
    kind: data.kind,
    run_id: start.run_id,
    workflow: start.workflow,
    step: start.step,
    ...(start.item === undefined ? {} : { item: start.item }),
    status: 'waiting',
    began_at: iso(now),
    ...(start.initiator ? { initiator: start.initiator } : {}),
  };
  if (data.kind === 'timer') {
    const until = data.until === undefined ? now + data.seconds! * 1000 : Date.parse(data.until);
    if (Number.isNaN(until))
      throw new StepwireError(
        'invalid_input',
        `wait_data.until must be an ISO date-time, got ${JSON.stringify(data.until)}`,
      );
    record.due_at = iso(Math.max(now, until));
    return record;
  }
  if (data.timeout_seconds !== undefined) record.due_at = iso(now + data.timeout_seconds * 1000);
  record.on_timeout = data.on_timeout ?? 'fail';
  if (data.kind === 'event')
    record.event = { event: data.event, ...(data.match ? { match: data.match } : {}) };
  else {
    const { kind: _k, timeout_seconds: _t, notify: _n, on_timeout: _o, ...approval } = data;
    record.approval = approval;
  }
  return record;
}

/** The id of the wait of a step execution: a UUID made from the run, step and item. */
export function waitId(run: string, step: string, item: number | undefined): Promise<string> {
  return derivedUuid(`wait of ${run}\0${step}\0${item ?? ''}`);
}

function slotKey(id: string, n: number): string {
  return `${id}/${String(n).padStart(3, '0')}`;
}

function openKey(record: WaitRecord): string {
  return `${record.kind}/${record.id}`;
}

function waitedSeconds(record: WaitRecord, at: string): number {
  return Math.max(0, (Date.parse(at) - Date.parse(record.began_at)) / 1000);
}

/** How messages name a wait: the approval's title, the event, or the timer, and its step. */
export function describeWait(record: WaitRecord): string {
  if (record.kind === 'approval') return `the approval "${record.approval?.title ?? record.step}"`;
  if (record.kind === 'event') return `the wait for event "${record.event?.event}" of step "${record.step}"`;
  return `the timer of step "${record.step}"`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
