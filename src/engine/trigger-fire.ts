/**
 * Firing triggers: schedules by their slots, entities by comparing rows with the snapshot kept in
 * storage, webhooks by a call. Every start carries a run key made from what fired it, so a slot, a
 * delivery or a row state starts one run, whatever the number of engines on one storage.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import type { Catalog } from '../catalog/catalog.js';
import { tableRow } from '../catalog/sheet-mapping.js';
import { NotFoundError, StepwireError, ValidationError } from '../errors/index.js';
import { setOwn } from '../schema/own.js';
import type { Trigger } from '../schema/index.js';
import type { RunRecord } from './record.js';
import { triggerKeySpace } from './run-keys.js';
import { INITIATOR } from './run-prepare.js';
import type { Principal } from '../access/principal.js';
import { scheduleOf, type StoredTrigger, type TriggerRegistry } from './triggers.js';

/** What firing needs from the engine. @internal */
export interface FireHost {
  readonly triggers: TriggerRegistry;
  readonly catalog: Catalog;
  readonly storage: StorageAdapter;
  start(
    name: string,
    input: unknown,
    options: { key: string; trigger: string; [INITIATOR]: Principal },
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
 * The instant `engine.tick(now)` fires at: a valid `Date`, or a number of milliseconds since 1970 (what
 * a Workers `scheduled` event gives as `scheduledTime`). @internal
 * @throws a `TypeError` naming `now` for anything else (an invalid date, a string, null, NaN).
 */
export function tickTime(now: unknown): Date {
  const isDate = Object.prototype.toString.call(now) === '[object Date]';
  const at = isDate ? Date.prototype.getTime.call(now) : typeof now === 'number' ? now : Number.NaN;
  if (Number.isNaN(new Date(at).getTime())) {
    const got =
      typeof now === 'string'
        ? `"${now}"`
        : isDate
          ? 'an invalid Date'
          : typeof now === 'number' || now === null || now === undefined
            ? String(now)
            : `a value of type ${typeof now}`;
    throw new TypeError(`now must be a valid Date or a number of milliseconds since 1970, got ${got}`);
  }
  return new Date(at);
}

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
      else if (trigger.type === 'entity') {
        const polled = await pollEntity(host, trigger, now);
        fired.push(...polled.fired);
        failures.push(...polled.failures);
      }
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

/**
 * Starts a run for a trigger and lets it go on; its failures are in its run record. The run key
 * `key` is kept in the trigger's own key space. @internal
 */
export async function startFor(
  host: FireHost,
  trigger: StoredTrigger,
  input: unknown,
  key: string,
): Promise<TriggerFiring> {
  // The key space names the trigger by its creation too: one created again under a deleted one's
  // name starts afresh, and a webhook delivery's key the deleted one used starts a new run.
  // A trigger's runs are started by its service principal.
  const handle = await host.start(trigger.workflow_name, input, {
    key,
    trigger: triggerKeySpace(trigger),
    [INITIATOR]: { id: `trigger:${trigger.name}`, kind: 'service', roles: [] },
  });
  handle.result.catch(() => undefined);
  return { trigger: trigger.name, run_id: handle.id, replayed: handle.replayed };
}

async function fireSchedule(
  host: FireHost,
  trigger: Extract<StoredTrigger, { type: 'schedule' }>,
  now: Date,
): Promise<TriggerFiring[]> {
  const state = stateOf(trigger, await host.storage.get<ScheduleState>('trigger_state', trigger.name));
  const after = Date.parse(state?.last_slot ?? trigger.created_at);
  // Only the latest slot fires: after downtime, one catch-up run, not one per missed slot.
  const slot = scheduleOf(trigger).latest(now.getTime(), after);
  if (slot === undefined) return [];
  const slotIso = new Date(slot).toISOString();
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
  /** The entity's definition the rows were read with (missing in snapshots written before it was kept). */
  shape?: EntityShape;
}

/**
 * What of an entity's definition its rows depend on: the primary key (which makes the keys) and each
 * column's type by name (null: not known, in a shape read off an older snapshot's rows).
 */
interface EntityShape {
  primary_key: string[];
  columns: Record<string, string | null>;
}

/** The entity's rows by key, with the shape they were read with. */
interface EntityRows {
  rows: Record<string, Record<string, unknown>>;
  shape: EntityShape;
  /** Keys held by more than one row, left out of `rows`, with how many rows hold each. */
  shared: Map<string, number>;
  /** The catalog's table the rows were read from (the same object while the sheet is unchanged). */
  table: object;
}

/** The stored state when it belongs to this trigger (not to a deleted one of the same name). */
function stateOf<S extends TriggerState>(trigger: StoredTrigger, state: S | undefined): S | undefined {
  return state && (state.trigger === undefined || state.trigger === trigger.created_at) ? state : undefined;
}

/** What one trigger did in a tick: the starts it made, and the rows it could not start a run for. */
interface Fired {
  fired: TriggerFiring[];
  failures: { trigger: string; error: unknown }[];
}

const NONE: Fired = { fired: [], failures: [] };

/** Per engine (its catalog), per entity trigger: the table it last compared, and the snapshot it wrote then. */
const polledTables = new WeakMap<Catalog, Map<string, { table: object; polledAt: string }>>();

function rememberPoll(catalog: Catalog, trigger: string, table: object, polledAt: string): void {
  let tables = polledTables.get(catalog);
  if (!tables) polledTables.set(catalog, (tables = new Map()));
  tables.set(trigger, { table, polledAt });
}

async function pollEntity(
  host: FireHost,
  trigger: Extract<StoredTrigger, { type: 'entity' }>,
  now: Date,
): Promise<Fired> {
  const { entity_name, events, interval_seconds = DEFAULT_INTERVAL_S } = trigger.entity_data;
  const state = stateOf(trigger, await host.storage.get<EntitySnapshot>('trigger_state', trigger.name));
  if (state && now.getTime() - Date.parse(state.polled_at) < interval_seconds * 1000) return NONE;
  if (!state) {
    // The first poll only records what is there.
    const read = await rowsOrNothing(host.catalog, entity_name);
    if (read) await host.storage.put('trigger_state', trigger.name, snapshotOf(trigger, now, read));
    return NONE;
  }
  // One engine compares a snapshot and writes the next: two doing it at once could write their
  // snapshots in either order, and a row state one of them fired would fire again after an older one.
  // Nothing to compare when the sheet is as this engine last compared it (the catalog gives the same
  // table while the sheet's revision is unchanged) and the snapshot is the one it wrote then: a large
  // entity polled every second would otherwise cost a full comparison and a snapshot each time.
  const seen = polledTables.get(host.catalog)?.get(trigger.name);
  if (seen && seen.polledAt === state.polled_at) {
    const { table } = await host.catalog.table(entity_name).catch(() => ({ table: undefined }));
    if (table !== undefined && table === seen.table) return NONE;
  }
  const claims = await claimPoll(host, trigger, state.polled_at, now);
  if (!claims) return NONE;
  try {
    const current = stateOf(trigger, await host.storage.get<EntitySnapshot>('trigger_state', trigger.name));
    // Another engine compared this snapshot and wrote the next one while this one waited.
    if (current?.polled_at !== state.polled_at) return NONE;
    const read = await rowsOrNothing(host.catalog, entity_name);
    if (!read) return NONE;
    const rows = read.rows;
    const same = comparison(state, read.shape);
    if (!same) {
      // A new primary key: the rows are keyed anew, so they are recorded again, as on the first poll.
      await host.storage.put('trigger_state', trigger.name, snapshotOf(trigger, now, read));
      return NONE;
    }
    const fired: TriggerFiring[] = [];
    const failures: { trigger: string; error: unknown }[] = [];
    const fire = async (event: 'created' | 'updated' | 'deleted', key: string) => {
      if (!events.includes(event)) return;
      const row = rows[key] ?? null;
      const previous = state.rows[key] ?? null;
      // The snapshot compared against is part of the key: an engine that compares the same snapshot
      // again (its claim ran out) starts no second run, and the same change made again later
      // (closed, open, closed) starts a run again.
      const runKey = `${event}:${state.polled_at}:${hash(key)}:${hash(JSON.stringify(previous))}:${hash(JSON.stringify(row))}`;
      const input = triggerInput(trigger, { event, key: JSON.parse(key) as unknown, row, previous });
      try {
        fired.push(await startFor(host, trigger, input, runKey));
      } catch (error) {
        // A row whose values the workflow's input refuses fails alone, once per row state; anything
        // else (storage, a deleted workflow) stops the poll, and the next one compares this snapshot again.
        if (!(error instanceof ValidationError)) throw error;
        failures.push({ trigger: trigger.name, error: rowFailure(error, event, key) });
      }
    };
    for (const key of Object.keys(rows)) {
      const before = state.rows[key];
      if (before === undefined) await fire('created', key);
      else if (!same(before, rows[key]!)) await fire('updated', key);
    }
    for (const key of Object.keys(state.rows))
      if (!Object.hasOwn(rows, key) && !read.shared.has(key)) await fire('deleted', key);
    // A shared key keeps its last known row, to compare with once one row holds it again.
    const next = snapshotOf(trigger, now, read);
    for (const key of read.shared.keys())
      if (Object.hasOwn(state.rows, key)) setOwn(next.rows, key, state.rows[key]);
    if (read.shared.size > 0)
      failures.push({ trigger: trigger.name, error: sharedKeys(entity_name, read.shared) });
    await host.storage.put('trigger_state', trigger.name, next);
    if (read.shared.size === 0) rememberPoll(host.catalog, trigger.name, read.table, next.polled_at);
    return { fired, failures };
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
function snapshotOf(trigger: StoredTrigger, now: Date, { rows, shape }: EntityRows): EntitySnapshot {
  return { trigger: trigger.created_at, polled_at: now.toISOString(), rows: { ...rows }, shape };
}

/**
 * How a snapshot's rows compare with rows read with `shape`: whether two rows of one key are alike,
 * on the columns both definitions have with the same type, so a column added, dropped or given
 * another type changes no row by itself. Undefined when the primary key changed (other columns, their
 * order or a key column's type): the keys do not compare.
 */
function comparison(
  snapshot: EntitySnapshot,
  shape: EntityShape,
): ((before: Record<string, unknown>, after: Record<string, unknown>) => boolean) | undefined {
  const was = snapshot.shape ?? shapeOfRows(snapshot.rows);
  const alike = (column: string) =>
    Object.hasOwn(was.columns, column) &&
    (was.columns[column] === null || was.columns[column] === shape.columns[column]);
  if (was.primary_key.length > 0 || Object.keys(snapshot.rows).length > 0) {
    const keyAlike =
      was.primary_key.length === shape.primary_key.length &&
      shape.primary_key.every((column, i) => was.primary_key[i] === column && alike(column));
    if (!keyAlike) return undefined;
  }
  const shared = Object.keys(shape.columns).filter(alike);
  const value = (row: Record<string, unknown>, column: string) =>
    JSON.stringify(Object.hasOwn(row, column) ? row[column] : null);
  return (before, after) => shared.every((column) => value(before, column) === value(after, column));
}

/** The shape of a snapshot written before snapshots kept theirs: read off its rows, types unknown. */
function shapeOfRows(rows: Record<string, Record<string, unknown>>): EntityShape {
  const key = Object.keys(rows)[0];
  if (key === undefined) return { primary_key: [], columns: {} };
  const columns: Record<string, null> = {};
  for (const column of Object.keys(rows[key]!)) setOwn(columns, column, null);
  return { primary_key: Object.keys(JSON.parse(key) as object), columns };
}

/** {@link rowsByKey}, or undefined when the entity is not in the catalog (the trigger waits for it). */
async function rowsOrNothing(catalog: Catalog, entityName: string): Promise<EntityRows | undefined> {
  try {
    return await rowsByKey(catalog, entityName);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

/** The entity's rows as objects by column name, under the JSON of their primary-key values. */
async function rowsByKey(catalog: Catalog, entityName: string): Promise<EntityRows> {
  const { entity, table } = await catalog.table(entityName);
  const shape: EntityShape = { primary_key: [...entity.primary_key], columns: {} };
  for (const column of entity.columns) setOwn(shape.columns, column.name, column.type);
  const keyIndexes = entity.primary_key.map((k) => entity.columns.findIndex((c) => c.name === k));
  const rows: Record<string, Record<string, unknown>> = {};
  const shared = new Map<string, number>();
  for (let i = 0; i < table.length; i++) {
    const values = tableRow(table, i);
    // A row with an empty key cell has no identity yet (a row being typed in): it counts once its key is filled.
    if (keyIndexes.some((c) => values[c] === null || values[c] === undefined)) continue;
    const row: Record<string, unknown> = {};
    entity.columns.forEach((column, c) => setOwn(row, column.name, values[c] ?? null));
    const key: Record<string, unknown> = {};
    keyIndexes.forEach((c) => setOwn(key, entity.columns[c]!.name, values[c]));
    const text = JSON.stringify(key);
    if (shared.has(text)) shared.set(text, shared.get(text)! + 1);
    else if (Object.hasOwn(rows, text)) {
      shared.set(text, 2);
      delete rows[text];
    } else setOwn(rows, text, row);
  }
  return { rows, shape, shared, table };
}

/**
 * The error of a poll that found keys held by several rows: their changes cannot be told apart, so
 * they are held at their last known state until each row has its own key.
 */
function sharedKeys(entityName: string, shared: Map<string, number>): StepwireError {
  const listed = [...shared].slice(0, 5).map(([key, count]) => `${key} (${count} rows)`);
  const more = shared.size > listed.length ? ` and ${shared.size - listed.length} more` : '';
  return new StepwireError(
    'ambiguous_key',
    `entity "${entityName}" has rows that share a primary key, so their changes cannot be told apart: ` +
      `${listed.join(', ')}${more}; give each row its own key (until then these keys fire nothing)`,
  );
}

/** The error of a row whose run input the workflow refused, naming the row by its key and event. */
function rowFailure(error: ValidationError, event: string, key: string): ValidationError {
  return new ValidationError(error.issues, `the ${event} row ${key}: ${error.message}`, { cause: error });
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
