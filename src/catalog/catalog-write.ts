/**
 * All-or-nothing writes to entities: plan every entity (rows checked, keys found, foreign keys
 * checked), then commit them one by one under the sheets' locks, taking back what was written when a
 * later one fails, and planning again when another writer moved the rows in between.
 * @module
 */
import type { CallOptions, SpreadsheetAdapter } from '../adapters/types.js';
import {
  LimitError,
  NotFoundError,
  SheetError,
  ValidationError,
  WriteRejectedError,
  type Issue,
} from '../errors/index.js';
import type { KeyedLock } from '../locks/keyed-lock.js';
import type { Entity, Relationship, WriteMode } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { foreignKeyIssues } from './foreign-keys.js';
import { cannotUpdate, commitKeyed, isKeyed } from './keyed-commit.js';
import type { EntityRows, WritableRows } from './rows.js';
import type { SheetCache } from './sheet-cache.js';
import { commitPlan, undoPlans, type Undo } from './sheet-commit.js';
import { planEntityWrite, planSize, type WritePlan } from './write-plan.js';
import { applyWriteAccess } from './write-access.js';
import type { EntityAccess } from '../access/grants.js';

/** Times a write is planned again when another writer moved its rows in between. */
const MOVED_ATTEMPTS = 3;

/** Issue codes that make a rejected write a conflict with what the sheet holds (HTTP 409). */
const CONFLICTS = new Set([
  'duplicate_key',
  'missing_key',
  'ambiguous_key',
  'referenced',
  'foreign_key',
  'rows_moved',
]);

/** One entity's part of an all-or-nothing write. */
export interface EntityWrite {
  /** Entity name. */
  entity: string;
  /** Rows to write: objects keyed by column name, arrays in column order, or a data table. */
  rows: WritableRows;
  /**
   * `append` adds rows after the last data row; `replace` replaces every data row; `upsert`,
   * `update` and `delete` work by primary key (for `delete`, `rows` are keys). @default "append"
   */
  mode?: WriteMode;
}

/** An {@link EntityWrite} whose rows were taken as the catalog takes them (`entityRowsOf`). @internal */
export type TakenWrite = EntityWrite & { rows: EntityRows };

/** What a write did, per entity. */
export interface WriteResult {
  /** Rows written, by entity name. */
  written: Record<string, number>;
}

/**
 * What a write to one entity did (`append`, `upsert`, `update`, `delete`): the shape of the
 * `write_entity` output and of the answer of `POST /catalog/entities/{name}/rows`.
 */
export interface WriteCount {
  /** Rows written: appended, changed, or deleted (an upsert counts both its changed and new rows). */
  written: number;
}

/** What a write needs from the catalog. @internal */
export interface WriterDeps {
  /**
   * The stored definition of an entity, the same object while it is unchanged (the sheet cache keeps
   * a table for the object it was mapped by).
   */
  definition(name: string, options?: CallOptions): Promise<Entity | undefined>;
  sheets: SpreadsheetAdapter;
  cache: SheetCache;
  lock: KeyedLock;
  maxRowsPerWrite: number;
  /** The enforced relationships. */
  relationships(): Promise<Relationship[]>;
}

/** What the principal of a write may write of an entity (see `Grants.entity`); throws when nothing. @internal */
export type WriteAccess = (entity: Entity) => EntityAccess;

/**
 * Writes to entities, all or nothing. With `options.idempotencyKey` the write is taken as possibly
 * delivered before: appended rows the sheet already holds with the same key and values count as
 * written and are not appended again (see `planEntityWrite`). With `access`, the principal's rules
 * apply to every row (see `applyWriteAccess`). @internal
 */
export async function writeEntities(
  deps: WriterDeps,
  writes: readonly TakenWrite[],
  options: CallOptions,
  access?: WriteAccess,
): Promise<WriteResult> {
  const entities = new Map<string, Entity>();
  for (const w of writes) {
    const entity = await deps.definition(w.entity, options);
    if (!entity) throw new NotFoundError('entity', w.entity);
    entities.set(w.entity, entity);
    // Before anything is read: a principal without entity.write learns nothing of the rows.
    access?.(entity);
  }
  const total = writes.reduce((n, w) => n + w.rows.length, 0);
  if (total > deps.maxRowsPerWrite) {
    throw new LimitError(
      'maxRowsPerWrite',
      `${total} rows exceed the limit of ${deps.maxRowsPerWrite} rows per write (limits.maxRowsPerWrite)`,
    );
  }
  const relationships = await deps.relationships();
  const lockKeys = (await lockedEntities(deps, entities, relationships)).map((e) =>
    sheetKey(e.spreadsheet_config),
  );
  return deps.lock.run(lockKeys, async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await writeOnce(
          deps,
          writes,
          entities,
          relationships,
          options,
          attempt < MOVED_ATTEMPTS,
          access,
        );
      } catch (error) {
        if (!(error instanceof SheetError && error.code === 'rows_moved')) throw error;
        for (const name of entities.keys()) deps.cache.forget(name);
        if (attempt >= MOVED_ATTEMPTS)
          throw new WriteRejectedError(
            [{ code: 'rows_moved', path: '', message: `${error.message}, ${MOVED_ATTEMPTS} times in a row` }],
            { cause: error, conflict: true },
          );
      }
    }
  });
}

async function writeOnce(
  deps: WriterDeps,
  writes: readonly TakenWrite[],
  entities: Map<string, Entity>,
  relationships: Relationship[],
  options: CallOptions,
  planAgain: boolean,
  access: WriteAccess | undefined,
): Promise<WriteResult> {
  const plans = await planWrites(deps, writes, entities, relationships, options, access);
  // A write to several entities takes back what it wrote when a later entity fails, so it needs
  // an adapter that can overwrite cells; a write to one entity is all or nothing by itself.
  const undoable = plans.filter((p) => planSize(p) > 0 || p.mode === 'replace').length > 1;
  if (undoable && !deps.sheets.write)
    throw new ValidationError([
      {
        code: 'unsupported',
        path: 'writes',
        message:
          'this spreadsheet adapter cannot overwrite cells, so a write to several entities could not be taken back if one failed; write them one by one',
      },
    ]);
  const keyed = plans.find((p) => isKeyed(p.mode));
  if (keyed && !deps.sheets.update) throw cannotUpdate(keyed.mode);
  // Counted in a Map and copied out with setOwn: entity names are the user's ("constructor", "__proto__").
  const counts = new Map<string, number>();
  const undos: { entity: string; undo: Undo }[] = [];
  try {
    for (const plan of plans) {
      options.signal?.throwIfAborted();
      if (isKeyed(plan.mode)) deps.cache.forget(plan.entity.name);
      const undo = isKeyed(plan.mode)
        ? await commitKeyed(deps.sheets, plan, options, undoable, planAgain && plans.length === 1)
        : await commitPlan(deps.sheets, plan, options, undoable);
      await deps.cache.committed(plan);
      if (undo)
        undos.push({
          entity: plan.entity.name,
          undo: async () => {
            deps.cache.forget(plan.entity.name);
            await undo();
          },
        });
      const name = plan.entity.name;
      counts.set(name, (counts.get(name) ?? 0) + planSize(plan) + plan.present.length);
    }
  } catch (error) {
    await undoPlans(undos, error);
    throw error;
  }
  const written: Record<string, number> = {};
  for (const [name, count] of counts) setOwn(written, name, count);
  return { written };
}

async function planWrites(
  deps: WriterDeps,
  writes: readonly TakenWrite[],
  entities: Map<string, Entity>,
  relationships: Relationship[],
  options: CallOptions,
  access: WriteAccess | undefined,
): Promise<WritePlan[]> {
  const issues: Issue[] = [];
  const plans: WritePlan[] = [];
  for (const w of writes) {
    const entity = entities.get(w.entity)!;
    const mode = w.mode ?? 'append';
    const earlier = plans.filter((p) => p.entity.name === entity.name);
    if (earlier.some((p) => p.mode !== 'append') || (earlier.length > 0 && mode !== 'append')) {
      issues.push({
        code: 'repeated_entity',
        path: entity.name,
        message: `"${entity.name}" is written twice in one write; only appends may repeat an entity`,
      });
      continue;
    }
    const loaded = await deps.cache.load(entity, options);
    const repeatable = options.idempotencyKey !== undefined;
    const plan = planEntityWrite(entity, mode, w.rows, loaded, earlier[0]?.rows ?? [], issues, repeatable);
    if (access) applyWriteAccess(plan, access(entity), issues);
    // Appends to one entity become one plan, so their rows land in order after the data.
    if (earlier[0]) {
      // Item by item: a spread of 100,000s of rows would overflow the call's arguments.
      for (const row of plan.rows) earlier[0].rows.push(row);
      for (const input of plan.inputs) earlier[0].inputs.push(input);
      for (const index of plan.present) earlier[0].present.push(index);
    } else plans.push(plan);
  }
  issues.push(
    ...(await foreignKeyIssues(plans, relationships, async (name) => {
      const entity = entities.get(name) ?? (await deps.definition(name, options));
      return entity && { entity, table: (await deps.cache.load(entity, options)).table };
    })),
  );
  if (issues.length > 0)
    throw new WriteRejectedError(issues, { conflict: issues.every((i) => CONFLICTS.has(i.code)) });
  return plans;
}

/**
 * The entities whose sheets a write locks: the ones written, and every entity at the other end of
 * an enforced foreign key of one of them. The checks read those too, so holding their locks keeps
 * two writes of this engine from passing each other's checks (an order added for a customer that a
 * delete at the same time removes).
 */
async function lockedEntities(
  deps: WriterDeps,
  entities: ReadonlyMap<string, Entity>,
  relationships: readonly Relationship[],
): Promise<Entity[]> {
  const locked = new Map(entities);
  for (const rel of relationships) {
    const ends = [rel.source_entity, rel.target_entity];
    if (!ends.some((name) => entities.has(name))) continue;
    for (const name of ends) {
      if (locked.has(name)) continue;
      const entity = await deps.definition(name);
      if (entity) locked.set(name, entity);
    }
  }
  return [...locked.values()];
}

function sheetKey(config: Entity['spreadsheet_config']): string {
  return `${config.spreadsheet_id}\u0000${config.sheet_name}`;
}
