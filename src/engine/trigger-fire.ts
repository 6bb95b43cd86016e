/**
 * Firing triggers: schedules by their slots, entities by comparing rows with the snapshot kept in
 * storage, webhooks by a call. Every start carries a run key made from what fired it, so a slot, a
 * delivery or a row state starts one run, whatever the number of engines on one storage.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import type { Catalog } from '../catalog/catalog.js';
import { tableRow } from '../catalog/sheet-mapping.js';
import { NotFoundError, StepwireError } from '../errors/index.js';
import { setOwn } from '../schema/own.js';
import type { Trigger } from '../schema/index.js';
import type { RunRecord } from './record.js';
import { scheduleOf, type StoredTrigger, type TriggerRegistry } from './triggers.js';

/** What firing needs from the engine. @internal */
export interface FireHost {
  readonly triggers: TriggerRegistry;
  readonly catalog: Catalog;
  readonly storage: StorageAdapter;
  start(
    name: string,
    input: unknown,
    options: { key: string; trigger: string },
  ): Promise<{ id: string; replayed: boolean; result: Promise<RunRecord> }>;
}

/** One start a trigger made. */
export interface TriggerFiring {
  /** The trigger that fired. */
  trigger: string;
  /** The run it started (or the run an earlier firing of the same slot, delivery or row state started). */
  run_id: string;
  /** True when that run was started before, by this or another engine. */
  replayed: boolean;
}

/**
 * Thrown by `engine.tick()` when some triggers could not fire (their workflow was deleted, an
 * entity's sheet cannot be read, storage failed): every other due trigger has fired, as `fired`
 * lists. A schedule that failed keeps its slot due, so the next tick tries it again.
 */
export class TriggerFireError extends StepwireError {
  /** Always `"TriggerFireError"`, so guards also work across package copies. */
  override name = 'TriggerFireError';
  /** The starts the other triggers made in this tick. */
  readonly fired: TriggerFiring[];
  /** Each trigger that failed, with its error. */
  readonly failures: { trigger: string; error: unknown }[];

  constructor(fired: TriggerFiring[], failures: { trigger: string; error: unknown }[]) {
    const what = failures
      .map(({ trigger, error }) => `"${trigger}": ${error instanceof Error ? error.message : String(error)}`)
      .join('; ');
    super('trigger_failed', `${failures.length} trigger(s) could not fire: ${what}`, {
      cause: failures[0]?.error,
    });
    this.fired = fired;
    this.failures = failures;
  }
}

const DEFAULT_INTERVAL_S = 60;

/**
 * Fires every schedule and entity trigger that is due at `now`. One trigger's failure does not stop
 * the others: they all fire, then a {@link TriggerFireError} names each one that failed. @internal
 */
export async function fireDue(host: FireHost, now: Date): Promise<TriggerFiring[]> {
  const fired: TriggerFiring[] = [];
  const failures: { trigger: string; error: unknown }[] = [];
  for (const trigger of await host.triggers.list()) {
    try {
      if (trigger.type === 'schedule') fired.push(...(await fireSchedule(host, trigger, now)));
      else if (trigger.type === 'entity') fired.push(...(await pollEntity(host, trigger, now)));
    } catch (error) {
      failures.push({ trigger: trigger.name, error });
    }
  }
  if (failures.length > 0) throw new TriggerFireError(fired, failures);
  return fired;
}

/** The input of a run a trigger starts: its `input_data` with `extra` laid over it. @internal */
export function triggerInput(trigger: Trigger, extra: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const source of [trigger.input_data ?? {}, extra])
    for (const [key, value] of Object.entries(source)) setOwn(input, key, value);
  return input;
}

/** Starts a run for a trigger and lets it go on; its failures are in its run record. @internal */
export async function startFor(
  host: FireHost,
  trigger: Trigger,
  input: unknown,
  key: string,
): Promise<TriggerFiring> {
  const handle = await host.start(trigger.workflow_name, input, { key, trigger: trigger.name });
  handle.result.catch(() => undefined);
  return { trigger: trigger.name, run_id: handle.id, replayed: handle.replayed };
}

async function fireSchedule(
  host: FireHost,
  trigger: Extract<StoredTrigger, { type: 'schedule' }>,
  now: Date,
): Promise<TriggerFiring[]> {
  const [slot] = scheduleOf(trigger).previousRuns(1, new Date(now.getTime() + 1));
  if (!slot) return [];
  const state = stateOf(trigger, await host.storage.get<ScheduleState>('trigger_state', trigger.name));
  const after = state?.last_slot ?? trigger.created_at;
  // Only the latest slot fires: after downtime, one catch-up run, not one per missed slot.
  if (slot.getTime() <= Date.parse(after)) return [];
  const slotIso = slot.toISOString();
  const firing = await startFor(host, trigger, triggerInput(trigger, {}), `slot:${slotIso}`);
  const next: ScheduleState = { trigger: trigger.created_at, last_slot: slotIso };
  await host.storage.put('trigger_state', trigger.name, next);
  return [firing];
}

/**
 * What a trigger keeps in storage names the trigger it belongs to by its `created_at`: a tick still
 * under way when its trigger is deleted may write it after the delete, and a trigger created again
 * under that name must not take it for its own (its first poll only records; it fires no slot before
 * its creation). A state without `trigger` was written before states named theirs, and is kept.
 */
interface TriggerState {
  trigger?: string;
}

/** What a schedule keeps: the last slot it fired. */
interface ScheduleState extends TriggerState {
  last_slot: string;
}

/** What an entity trigger keeps between polls: when it last read, and each row by its key. */
interface EntitySnapshot extends TriggerState {
  polled_at: string;
  rows: Record<string, Record<string, unknown>>;
}

/** The stored state when it belongs to this trigger (not to a deleted one of the same name). */
function stateOf<S extends TriggerState>(trigger: StoredTrigger, state: S | undefined): S | undefined {
  return state && (state.trigger === undefined || state.trigger === trigger.created_at) ? state : undefined;
}

async function pollEntity(
  host: FireHost,
  trigger: Extract<StoredTrigger, { type: 'entity' }>,
  now: Date,
): Promise<TriggerFiring[]> {
  const { entity_name, events, interval_seconds = DEFAULT_INTERVAL_S } = trigger.entity_data;
  const state = stateOf(trigger, await host.storage.get<EntitySnapshot>('trigger_state', trigger.name));
  if (state && now.getTime() - Date.parse(state.polled_at) < interval_seconds * 1000) return [];
  if (!state) {
    // The first poll only records what is there.
    const rows = await rowsOrNothing(host.catalog, entity_name);
    if (rows) await host.storage.put('trigger_state', trigger.name, snapshotOf(trigger, now, rows));
    return [];
  }
  // One engine compares a snapshot and writes the next: two doing it at once could write their
  // snapshots in either order, and a row state one of them fired would fire again after an older one.
  const claims = await claimPoll(host, trigger, state.polled_at, now);
  if (!claims) return [];
  try {
    const current = stateOf(trigger, await host.storage.get<EntitySnapshot>('trigger_state', trigger.name));
    // Another engine compared this snapshot and wrote the next one while this one waited.
    if (current?.polled_at !== state.polled_at) return [];
    const rows = await rowsOrNothing(host.catalog, entity_name);
    if (!rows) return [];
    const fired: TriggerFiring[] = [];
    const fire = async (event: 'created' | 'updated' | 'deleted', key: string) => {
      if (!events.includes(event)) return;
      const row = rows[key] ?? null;
      const previous = state.rows[key] ?? null;
      // The snapshot compared against is part of the key: an engine that compares the same snapshot
      // again (its claim ran out) starts no second run, and the same change made again later
      // (closed, open, closed) starts a run again.
      const runKey = `${event}:${state.polled_at}:${hash(key)}:${hash(JSON.stringify(previous))}:${hash(JSON.stringify(row))}`;
      const input = triggerInput(trigger, { event, key: JSON.parse(key) as unknown, row, previous });
      fired.push(await startFor(host, trigger, input, runKey));
    };
    for (const key of Object.keys(rows)) {
      const before = state.rows[key];
      if (before === undefined) await fire('created', key);
      else if (JSON.stringify(before) !== JSON.stringify(rows[key])) await fire('updated', key);
    }
    for (const key of Object.keys(state.rows)) if (!Object.hasOwn(rows, key)) await fire('deleted', key);
    await host.storage.put('trigger_state', trigger.name, snapshotOf(trigger, now, rows));
    return fired;
  } finally {
    // A claim left behind (storage failing here) runs out after POLL_LEASE_MS.
    for (const claim of claims)
      await Promise.resolve(host.storage.delete('trigger_state', claim)).catch(() => false);
  }
}

/** How long a claim to compare a snapshot holds, when the engine that made it neither finishes nor gives it up. */
const POLL_LEASE_MS = 5 * 60_000;

/** What an engine comparing an entity's snapshot keeps in storage while it does. */
interface PollClaim extends TriggerState {
  claimed_at: string;
}

/**
 * Claims the comparison of the snapshot taken at `polledAt`: the keys of this engine's claim and of
 * the expired claims it replaced (to delete when done), or undefined when another engine holds it.
 * Claims are entries `<trigger>/poll/<polled_at>/<n>` made with `ifAbsent`; one older than
 * {@link POLL_LEASE_MS} (its engine stopped) is passed over for the next `n`.
 */
async function claimPoll(
  host: FireHost,
  trigger: StoredTrigger,
  polledAt: string,
  now: Date,
): Promise<string[] | undefined> {
  const claim: PollClaim = { trigger: trigger.created_at, claimed_at: now.toISOString() };
  const keys: string[] = [];
  for (let n = 1; n <= 100; n++) {
    const key = `${trigger.name}/poll/${polledAt}/${n}`;
    keys.push(key);
    if (await host.storage.put('trigger_state', key, claim, { ifAbsent: true })) return keys;
    const held = await host.storage.get<PollClaim>('trigger_state', key);
    if (held && now.getTime() - Date.parse(held.claimed_at) < POLL_LEASE_MS) return undefined;
  }
  return undefined;
}

/** The snapshot of an entity trigger's rows, read at `now`. */
function snapshotOf(
  trigger: StoredTrigger,
  now: Date,
  rows: Record<string, Record<string, unknown>>,
): EntitySnapshot {
  return { trigger: trigger.created_at, polled_at: now.toISOString(), rows };
}

/** {@link rowsByKey}, or undefined when the entity is not in the catalog (the trigger waits for it). */
async function rowsOrNothing(
  catalog: Catalog,
  entityName: string,
): Promise<Record<string, Record<string, unknown>> | undefined> {
  try {
    return await rowsByKey(catalog, entityName);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** The entity's rows as objects by column name, under the JSON of their primary-key values. */
async function rowsByKey(
  catalog: Catalog,
  entityName: string,
): Promise<Record<string, Record<string, unknown>>> {
  const { entity, table } = await catalog.table(entityName);
  const keyIndexes = entity.primary_key.map((k) => entity.columns.findIndex((c) => c.name === k));
  const rows: Record<string, Record<string, unknown>> = {};
  for (let i = 0; i < table.length; i++) {
    const values = tableRow(table, i);
    const row: Record<string, unknown> = {};
    entity.columns.forEach((column, c) => setOwn(row, column.name, values[c] ?? null));
    const key: Record<string, unknown> = {};
    keyIndexes.forEach((c) => setOwn(key, entity.columns[c]!.name, values[c] ?? null));
    setOwn(rows, JSON.stringify(key), row);
  }
  return rows;
}

/** A short stable hash of text (two FNV-1a 32-bit passes), for run keys of bounded length. */
function hash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
