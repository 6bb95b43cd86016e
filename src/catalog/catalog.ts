import type {
  CallOptions,
  CellValue,
  SheetRef,
  SpreadsheetAdapter,
  StorageAdapter,
} from '../adapters/types.js';
import {
  ConflictError,
  LimitError,
  NotFoundError,
  SheetError,
  ValidationError,
  WriteRejectedError,
  formatIssue,
  isStepwireError,
  type Issue,
} from '../errors/index.js';
import {
  EntitySchema,
  GetEntityInputSchema,
  RelationshipSchema,
  check,
  parse,
  type Entity,
  type GetEntityInput,
  type GetEntityOutput,
  type Relationship,
  type WriteMode,
} from '../schema/index.js';
import { executeRead } from '../query/index.js';
import { KeyedLock } from '../locks/keyed-lock.js';
import { foreignKeyIssues } from './foreign-keys.js';
import { cannotUpdate, commitKeyed, isKeyed } from './keyed-commit.js';
import { redefinitionIssues, relationshipIssues } from './relationships.js';
import type { EntityRows } from './rows.js';
import { commitPlan, undoPlans, type Undo } from './sheet-commit.js';
import { appendRows, cellFromValue, headerIndexes, mapSheet, type EntityTable } from './sheet-mapping.js';
import { keyColumns, planEntityWrite, planSize, type LoadedSheet, type WritePlan } from './write-plan.js';

/** Times a write is planned again when another writer moved its rows in between. */
const MOVED_ATTEMPTS = 3;

/** Issue codes that make a rejected write a conflict with what the sheet holds (HTTP 409). */
const CONFLICTS = new Set(['duplicate_key', 'missing_key', 'ambiguous_key', 'referenced', 'rows_moved']);

/** Limits the catalog needs. @internal */
export interface CatalogLimits {
  maxPageSize: number;
  defaultPageSize: number;
  maxRowsPerWrite: number;
}

export type { EntityRows };

/** One entity's part of an all-or-nothing write. */
export interface EntityWrite {
  /** Entity name. */
  entity: string;
  /** Rows to write. */
  rows: EntityRows;
  /**
   * `append` adds rows after the last data row; `replace` replaces every data row; `upsert`,
   * `update` and `delete` work by primary key (for `delete`, `rows` are keys). @default "append"
   */
  mode?: WriteMode;
}

/** What a write did, per entity. */
export interface WriteResult {
  /** Rows written, by entity name. */
  written: Record<string, number>;
}

/** Whether `upsertEntity` created the entity or replaced it. */
export interface UpsertResult {
  /** The stored definition. */
  entity: Entity;
  /** True when no entity of that name existed. */
  created: boolean;
}

/**
 * The catalog: entities, their relationships, entity reads and all-or-nothing writes.
 * Reached as `engine.catalog`.
 */
export class Catalog {
  #storage: StorageAdapter;
  #sheets: SpreadsheetAdapter;
  #limits: CatalogLimits;
  #ready: () => Promise<void>;
  #cache = new Map<string, LoadedSheet>();
  #writes = new KeyedLock();

  /** @internal */
  constructor(deps: {
    storage: StorageAdapter;
    spreadsheets: SpreadsheetAdapter;
    limits: CatalogLimits;
    ready: () => Promise<void>;
  }) {
    this.#storage = deps.storage;
    this.#sheets = deps.spreadsheets;
    this.#limits = deps.limits;
    this.#ready = deps.ready;
  }

  /**
   * Registers a new entity (`POST /catalog/entity`).
   * @throws {@link ValidationError} when the definition is invalid; {@link ConflictError} when the name is taken.
   */
  async registerEntity(definition: unknown): Promise<Entity> {
    await this.#ready();
    const entity = parse(EntitySchema, definition, 'entity');
    const stored = await this.#storage.put('entities', entity.name, entity, { ifAbsent: true });
    if (!stored) throw new ConflictError('entity', entity.name);
    this.#cache.delete(entity.name);
    return entity;
  }

  /**
   * Registers an entity or replaces its definition (`POST /catalog/entities/spreadsheet/register`).
   * Relationships that name columns the new definition lacks are reported as a validation error.
   */
  async upsertEntity(definition: unknown): Promise<UpsertResult> {
    await this.#ready();
    const entity = parse(EntitySchema, definition, 'entity');
    const previous = await this.#storage.get<Entity>('entities', entity.name);
    if (previous) {
      const issues = redefinitionIssues(entity, previous, await this.listRelationships());
      if (issues.length > 0) throw new ValidationError(issues);
    }
    await this.#storage.put('entities', entity.name, entity);
    this.#cache.delete(entity.name);
    return { entity, created: !previous };
  }

  /** The definition of an entity. @throws {@link NotFoundError} */
  async getDefinition(name: string): Promise<Entity> {
    await this.#ready();
    const entity = await this.#storage.get<Entity>('entities', name);
    if (!entity) throw new NotFoundError('entity', name);
    return entity;
  }

  /** Every entity definition, ordered by name. */
  async listEntities(): Promise<Entity[]> {
    await this.#ready();
    return (await this.#storage.list<Entity>('entities')).map((e) => e.value);
  }

  /**
   * Creates a relationship (`POST /catalog/entity/relationship`): both entities and every named
   * column must exist, the column lists be of equal length and the paired columns of the same type.
   * @throws {@link ValidationError}, {@link NotFoundError} (unknown entity), {@link ConflictError} (name taken).
   */
  async createRelationship(definition: unknown): Promise<Relationship> {
    await this.#ready();
    const rel = parse(RelationshipSchema, definition, 'relationship');
    const source = await this.#storage.get<Entity>('entities', rel.source_entity);
    const target = await this.#storage.get<Entity>('entities', rel.target_entity);
    if (!source) throw new NotFoundError('entity', rel.source_entity);
    if (!target) throw new NotFoundError('entity', rel.target_entity);
    const issues = relationshipIssues(rel, source, target);
    if (issues.length > 0) throw new ValidationError(issues);
    if (!(await this.#storage.put('relationships', rel.name, rel, { ifAbsent: true })))
      throw new ConflictError('relationship', rel.name);
    return rel;
  }

  /** Every relationship, ordered by name. */
  async listRelationships(): Promise<Relationship[]> {
    await this.#ready();
    return (await this.#storage.list<Relationship>('relationships')).map((r) => r.value);
  }

  /**
   * Reads an entity, as the `get_entity` action does. Never throws for bad input or unreadable
   * data: problems come back in `body.error` with `body.table` columns and rows null.
   */
  async getEntity(input: GetEntityInput | unknown, options: CallOptions = {}): Promise<GetEntityOutput> {
    await this.#ready();
    const name =
      typeof input === 'object' && input !== null
        ? (input as { entity_name?: unknown }).entity_name
        : undefined;
    try {
      const entity = typeof name === 'string' ? await this.#storage.get<Entity>('entities', name) : undefined;
      if (!entity) {
        const shape = check(GetEntityInputSchema, input);
        if (!shape.ok) return failure(shape.issues.map(formatIssue));
        return failure([`entity_name: entity "${String(name)}" does not exist`]);
      }
      const loaded = await this.#load(entity, options);
      return executeRead(entity.name, loaded.table, input, this.#limits);
    } catch (error) {
      if (isStepwireError(error)) return failure([error.message]);
      throw error;
    }
  }

  /**
   * Appends rows to an entity, all or nothing: types, primary-key uniqueness (against existing and
   * new rows) and enforced foreign keys are checked for every row before anything is written.
   * @throws {@link WriteRejectedError} naming every bad row and key; nothing is written then.
   */
  async append(name: string, rows: EntityRows, options: CallOptions = {}): Promise<WriteResult> {
    return this.write([{ entity: name, rows, mode: 'append' }], options);
  }

  /**
   * Writes rows by primary key: a row whose key exists changes in place (only the columns it
   * gives; an object row may leave columns out), the others are appended. All or nothing.
   * @example
   * ```ts
   * await engine.catalog.upsert('invoices', [{ id: 42, status: 'sent' }]);
   * ```
   * @throws {@link WriteRejectedError} naming every bad row (code `write_conflict` when every
   *   problem is a key conflict); nothing is written then.
   */
  async upsert(name: string, rows: EntityRows, options: CallOptions = {}): Promise<WriteResult> {
    return this.write([{ entity: name, rows, mode: 'upsert' }], options);
  }

  /**
   * Changes rows by primary key, in place: only the columns each row gives are written. Every key
   * must exist. All or nothing.
   * @throws {@link WriteRejectedError} with code `write_conflict` when a key is missing.
   */
  async update(name: string, rows: EntityRows, options: CallOptions = {}): Promise<WriteResult> {
    return this.write([{ entity: name, rows, mode: 'update' }], options);
  }

  /**
   * Deletes rows by primary key (`keys`: objects of the primary-key columns); the rows below move
   * up. Every key must exist, and no row an enforced foreign key references may go. All or nothing.
   * @example
   * ```ts
   * await engine.catalog.delete('orders', [{ order_id: 10 }]);
   * ```
   * @throws {@link WriteRejectedError} with code `write_conflict` naming a missing key, or the
   *   referencing entity and row.
   */
  async delete(name: string, keys: EntityRows, options: CallOptions = {}): Promise<WriteResult> {
    return this.write([{ entity: name, rows: keys, mode: 'delete' }], options);
  }

  /**
   * Writes to several entities at once, all or nothing: every row of every entity is checked
   * before the first row is written, and when writing a later entity fails, the rows already
   * written to the earlier ones are taken back (overwritten with what was there before). Rows are
   * found by key under the per-sheet lock; when another writer moved them meanwhile, the write is
   * planned again (up to three times).
   * @throws {@link WriteRejectedError} naming every bad row; nothing is written then.
   */
  async write(writes: readonly EntityWrite[], options: CallOptions = {}): Promise<WriteResult> {
    await this.#ready();
    const entities = new Map<string, Entity>();
    for (const w of writes) {
      const entity = await this.#storage.get<Entity>('entities', w.entity);
      if (!entity) throw new NotFoundError('entity', w.entity);
      entities.set(w.entity, entity);
    }
    const total = writes.reduce((n, w) => n + w.rows.length, 0);
    if (total > this.#limits.maxRowsPerWrite) {
      throw new LimitError(
        'maxRowsPerWrite',
        `${total} rows exceed the limit of ${this.#limits.maxRowsPerWrite} rows per write (limits.maxRowsPerWrite)`,
      );
    }
    const relationships = (await this.listRelationships()).filter(
      (r) => r.foreign_key_config.enforce_foreign_key,
    );
    const lockKeys = [...entities.values()].map((e) => sheetKey(e.spreadsheet_config));
    return this.#writes.run(lockKeys, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.#writeOnce(writes, entities, relationships, options);
        } catch (error) {
          if (!(error instanceof SheetError && error.code === 'rows_moved')) throw error;
          for (const name of entities.keys()) this.#cache.delete(name);
          if (attempt >= MOVED_ATTEMPTS)
            throw new WriteRejectedError(
              [
                {
                  code: 'rows_moved',
                  path: '',
                  message: `${error.message}, ${MOVED_ATTEMPTS} times in a row`,
                },
              ],
              { cause: error, conflict: true },
            );
        }
      }
    });
  }

  async #writeOnce(
    writes: readonly EntityWrite[],
    entities: Map<string, Entity>,
    relationships: Relationship[],
    options: CallOptions,
  ): Promise<WriteResult> {
    const plans = await this.#planWrites(writes, entities, relationships, options);
    // A write to several entities takes back what it wrote when a later entity fails, so it needs
    // an adapter that can overwrite cells; a write to one entity is all or nothing by itself.
    const undoable = plans.filter((p) => planSize(p) > 0 || p.mode === 'replace').length > 1;
    if (undoable && !this.#sheets.write)
      throw new ValidationError([
        {
          code: 'unsupported',
          path: 'writes',
          message:
            'this spreadsheet adapter cannot overwrite cells, so a write to several entities could not be taken back if one failed; write them one by one',
        },
      ]);
    const keyed = plans.find((p) => isKeyed(p.mode));
    if (keyed && !this.#sheets.update) throw cannotUpdate(keyed.mode);
    const written: Record<string, number> = {};
    const undos: { entity: string; undo: Undo }[] = [];
    try {
      for (const plan of plans) {
        options.signal?.throwIfAborted();
        const undo = await this.#commit(plan, options, undoable);
        if (undo) undos.push({ entity: plan.entity.name, undo });
        written[plan.entity.name] = (written[plan.entity.name] ?? 0) + planSize(plan);
      }
    } catch (error) {
      await undoPlans(undos, error);
      throw error;
    }
    return { written };
  }

  /** Drops cached tables (all, or one entity's), so the next read goes to the spreadsheet. */
  invalidate(entityName?: string): void {
    if (entityName === undefined) this.#cache.clear();
    else this.#cache.delete(entityName);
  }

  /** The mapped table of an entity (read through the cache). @internal */
  async table(name: string, options: CallOptions = {}): Promise<{ entity: Entity; table: EntityTable }> {
    await this.#ready();
    const entity = await this.getDefinition(name);
    return { entity, table: (await this.#load(entity, options)).table };
  }

  async #planWrites(
    writes: readonly EntityWrite[],
    entities: Map<string, Entity>,
    relationships: Relationship[],
    options: CallOptions,
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
      const loaded = await this.#load(entity, options);
      const before = earlier.flatMap((p) => p.rows);
      plans.push(planEntityWrite(entity, mode, w.rows, loaded, before, issues));
    }
    issues.push(
      ...(await foreignKeyIssues(plans, relationships, async (name) => {
        const entity = entities.get(name) ?? (await this.#storage.get<Entity>('entities', name));
        return entity && { entity, table: (await this.#load(entity, options)).table };
      })),
    );
    if (issues.length > 0)
      throw new WriteRejectedError(issues, { conflict: issues.every((i) => CONFLICTS.has(i.code)) });
    return plans;
  }

  /** Writes one plan and keeps the cached table in step with what is now in the sheet. */
  async #commit(plan: WritePlan, options: CallOptions, undoable: boolean): Promise<Undo | undefined> {
    const { entity, loaded } = plan;
    const config = entity.spreadsheet_config;
    const ref: SheetRef = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
    const keyed = isKeyed(plan.mode);
    if (keyed) this.#cache.delete(entity.name);
    const undo = keyed
      ? await commitKeyed(this.#sheets, plan, options, undoable)
      : await commitPlan(this.#sheets, plan, options, undoable);
    if (!keyed) {
      const revision = this.#sheets.revision ? await this.#sheets.revision(ref) : undefined;
      const base =
        plan.mode === 'replace'
          ? { ...loaded, table: mapSheet(entity, [headerCells(entity, loaded)]), keyCells: [] }
          : loaded;
      const keyCells = plan.rows.map((row) =>
        keyColumns(entity).map((c) => cellFromValue(entity.columns[c]!.type, row[c])),
      );
      this.#cache.set(entity.name, {
        ...base,
        table: appendRows(base.table, plan.rows),
        keyCells: [...base.keyCells, ...keyCells],
        revision,
      });
    }
    if (!undo) return undefined;
    return async () => {
      this.#cache.delete(entity.name);
      await undo();
    };
  }

  async #load(entity: Entity, options: CallOptions): Promise<LoadedSheet> {
    const config = entity.spreadsheet_config;
    const ref: SheetRef = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
    const revision = this.#sheets.revision ? await this.#sheets.revision(ref) : undefined;
    const cached = this.#cache.get(entity.name);
    if (cached && revision !== undefined && cached.revision === revision) return cached;
    const [cells = []] = await this.#sheets.read(
      [{ ...ref, row: config.origin.row, col: config.origin.col }],
      options,
    );
    const table = mapSheet(entity, cells);
    const header = cells[0] ?? [];
    const indexes = headerIndexes(entity, header);
    const keyAt = keyColumns(entity).map((c) => indexes[c]!);
    const keyCells: CellValue[][] = new Array(table.length);
    for (let r = 0; r < table.length; r++) keyCells[r] = keyAt.map((h) => cells[r + 1]?.[h] ?? null);
    const loaded: LoadedSheet = {
      table,
      headerIndexes: indexes,
      headerWidth: Math.max(header.length, ...indexes.map((i) => i + 1)),
      revision,
      keyCells,
    };
    if (revision !== undefined) this.#cache.set(entity.name, loaded);
    return loaded;
  }
}

function headerCells(entity: Entity, loaded: LoadedSheet): CellValue[] {
  const header: CellValue[] = new Array<CellValue>(loaded.headerWidth).fill(null);
  entity.columns.forEach((column, c) => (header[loaded.headerIndexes[c]!] = column.name));
  return header;
}

function sheetKey(config: Entity['spreadsheet_config']): string {
  return `${config.spreadsheet_id}\u0000${config.sheet_name}`;
}

function failure(errors: string[]): GetEntityOutput {
  return { body: { table: { columns: null, rows: null }, error: { is_error: true, errors } } };
}
