import { createOrReplace } from '../adapters/create-or-replace.js';
import type { CallOptions, SpreadsheetAdapter, StorageAdapter } from '../adapters/types.js';
import {
  ConflictError,
  NotFoundError,
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
  type EntityBody,
  type GetEntityInput,
  type GetEntityOutput,
  type Relationship,
  type RelationshipBody,
  type WriteMode,
  WRITE_MODES,
} from '../schema/index.js';
import { describeValue } from '../schema/issues.js';
import { executeRead } from '../query/index.js';
import { rowsMatchingRules } from '../query/execute.js';
import { KeyedLock } from '../locks/keyed-lock.js';
import {
  writeEntities,
  type EntityWrite,
  type TakenWrite,
  type WriteCount,
  type WriteResult,
  type WriterDeps,
} from './catalog-write.js';
import { redefinitionIssues, relationshipIssues } from './relationships.js';
import { entityRowsOf, rowsOf, type EntityRows, type WritableRows } from './rows.js';
import { SheetCache } from './sheet-cache.js';
import { sheetHeaderIssues } from './header-check.js';
import type { EntityTable } from './sheet-mapping.js';
import { ForbiddenError } from '../errors/index.js';
import type { EntityAccess, Grants } from '../access/grants.js';
import type { AuditRecord } from '../access/audit.js';
import type { Permission } from '../schema/access.js';
import { setOwn } from '../schema/own.js';
import { appendRows, createTable } from '../query/entity-table.js';
import { tableRow } from './sheet-mapping.js';
import { storedEntity, hasComputed } from '../computed/columns.js';
import { entityIssues, relatedIssues } from '../computed/check.js';
import { ComputedTables, type ComputeSource, type ReadAccessOf } from '../computed/compute.js';
import {
  DefinitionHistory,
  type DefinitionAuthor,
  type DefinitionWriteOptions,
  type VersionPage,
  type VersionQuery,
} from '../adapters/definition-history.js';

/** Limits the catalog needs. @internal */
export interface CatalogLimits {
  maxPageSize: number;
  defaultPageSize: number;
  maxRowsPerWrite: number;
}

export type { EntityRows, WritableRows };

export type { EntityWrite, WriteCount, WriteResult };

/** What `putEntity` (`upsertEntity`) did: the stored definition, and whether it was created or replaced. */
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
  #limits: CatalogLimits;
  #ready: () => Promise<void>;
  #cache: SheetCache;
  #writer: WriterDeps;
  /**
   * The definitions last read, by entity name, with the stored JSON text they were parsed from (when
   * the storage gives it): while the stored definition is unchanged, reads and writes get the same
   * `Entity` object, which is what the sheet cache's entries are kept for.
   */
  #definitions = new Map<string, { entity: Entity; text: string | undefined }>();
  /** In a principal's view ({@link Catalog.as}): its grants under the policy stored now. */
  #grants: (() => Promise<Grants>) | undefined;
  /** In a view of people's writes (screens, the rows route, `engine.as(p).catalog`): where they are logged. */
  #audit: WriteAudit | undefined;
  #history: DefinitionHistory;
  /** Entity tables widened with their computed columns, kept per sheet revision. */
  #computed: ComputedTables;

  /** @internal */
  constructor(
    deps: {
      storage: StorageAdapter;
      spreadsheets: SpreadsheetAdapter;
      limits: CatalogLimits;
      ready: () => Promise<void>;
    },
    view?: { of: Catalog; grants: () => Promise<Grants>; audit?: WriteAudit | undefined },
  ) {
    if (view) {
      // The same catalog (storage, cache, locks, definitions), every call checked by the grants.
      const of = view.of;
      this.#storage = of.#storage;
      this.#limits = of.#limits;
      this.#ready = of.#ready;
      this.#cache = of.#cache;
      this.#writer = of.#writer;
      this.#definitions = of.#definitions;
      this.#grants = view.grants;
      this.#audit = view.audit;
      this.#history = of.#history;
      this.#computed = of.#computed;
      return;
    }
    this.#storage = deps.storage;
    this.#limits = deps.limits;
    this.#ready = deps.ready;
    this.#cache = new SheetCache(deps.spreadsheets);
    this.#history = new DefinitionHistory(deps.storage);
    this.#computed = new ComputedTables();
    this.#writer = {
      // Writes see the stored columns only: computed ones have no cells and are refused by name.
      definition: async (name, options) => {
        const entity = await this.#definition(name, options);
        return entity && storedEntity(entity);
      },
      sheets: deps.spreadsheets,
      cache: this.#cache,
      lock: new KeyedLock(),
      maxRowsPerWrite: deps.limits.maxRowsPerWrite,
      relationships: async () =>
        (await this.listRelationships()).filter((r) => r.foreign_key_config.enforce_foreign_key),
    };
  }

  /**
   * This catalog as a principal sees it: every call checked by `grants`. What
   * `engine.as(principal).catalog` is. @internal
   */
  as(grants: () => Promise<Grants>, audit?: WriteAudit): Catalog {
    return new Catalog(undefined as never, { of: this, grants, audit });
  }

  /** The grants of this view's principal, or undefined for the engine's own catalog (no checks). */
  async #access(): Promise<Grants | undefined> {
    if (!this.#grants) return undefined;
    const grants = await this.#grants();
    return grants.unrestricted ? undefined : grants;
  }

  /** Throws unless this view's principal may change definitions. */
  async #mayDefine(what: string): Promise<void> {
    (await this.#access())?.require('definitions.write', undefined, `change ${what}`);
  }

  /**
   * Registers a new entity (`POST /catalog/entity`). When its sheet can be read, the header row must
   * name every column (so every primary-key column).
   * @throws {@link ValidationError} when the definition is invalid or the readable header row lacks a
   * column; {@link ConflictError} when the name is taken.
   * @see {@link Catalog.createEntity}, the same under the verb every registry uses.
   */
  async registerEntity(definition: EntityBody, options: DefinitionWriteOptions = {}): Promise<Entity> {
    await this.#ready();
    await this.#mayDefine('entity definitions');
    const entity = parse(EntitySchema, definition, 'entity');
    await this.#checkComputed(entity);
    await this.#checkSheet(entity);
    const by = await this.#author(options);
    await this.#history.changing('entity', entity.name, async () => {
      const stored = await this.#storage.put('entities', entity.name, entity, { ifAbsent: true });
      if (!stored) throw new ConflictError('entity', entity.name);
      await this.#history.record('entity', entity.name, 'create', entity, by);
    });
    this.#definitions.delete(entity.name);
    this.#cache.forget(entity.name);
    return entity;
  }

  /**
   * Registers an entity or replaces its definition (`POST /catalog/entities/spreadsheet/register`).
   * Relationships that name columns the new definition lacks, and a readable header row that lacks
   * one of its columns, are reported as a validation error.
   * @see {@link Catalog.putEntity}, the same under the verb every registry uses.
   */
  async upsertEntity(definition: EntityBody, options: DefinitionWriteOptions = {}): Promise<UpsertResult> {
    await this.#ready();
    await this.#mayDefine('entity definitions');
    const entity = parse(EntitySchema, definition, 'entity');
    await this.#checkComputed(entity);
    await this.#checkSheet(entity);
    const by = await this.#author(options);
    const created = await this.#history.changing('entity', entity.name, async () => {
      const made = await createOrReplace(this.#storage, 'entities', entity.name, entity, async (previous) => {
        const issues = redefinitionIssues(storedEntity(entity), previous, await this.listRelationships());
        if (issues.length > 0) throw new ValidationError(issues);
      });
      await this.#history.record('entity', entity.name, made ? 'create' : 'replace', entity, by);
      return made;
    });
    // Reads under way keep their table to themselves; later ones map the sheet by the new definition.
    this.#definitions.delete(entity.name);
    this.#cache.forget(entity.name);
    return { entity, created };
  }

  /**
   * Creates an entity: {@link Catalog.registerEntity} under the verb of every registry for "create;
   * a name already taken is a conflict" (`createRelationship`, `engine.workflows.create`,
   * `engine.triggers.create`).
   * @throws {@link ValidationError}; {@link ConflictError} when the name is taken.
   */
  createEntity(definition: EntityBody, options: DefinitionWriteOptions = {}): Promise<Entity> {
    return this.registerEntity(definition, options);
  }

  /**
   * Creates or replaces an entity: {@link Catalog.upsertEntity} under the verb of every registry for
   * "create or replace" (`engine.workflows.put`, `engine.applications.put`, `engine.scripts.put`).
   * @throws {@link ValidationError}
   */
  putEntity(definition: EntityBody, options: DefinitionWriteOptions = {}): Promise<UpsertResult> {
    return this.upsertEntity(definition, options);
  }

  /**
   * The versions of an entity definition, oldest first, a page at a time: one per create and replace.
   * Needs `definitions.read` in a principal's view.
   * @throws {@link NotFoundError} when no entity of that name ever existed.
   */
  async entityVersions(name: string, query: VersionQuery = {}): Promise<VersionPage<Entity>> {
    await this.#ready();
    (await this.#access())?.require('definitions.read', undefined, 'read entity versions');
    return this.#history.list('entity', name, query, () => this.#storage.get('entities', name));
  }

  /**
   * Refuses an entity whose formulas, checks or validation rules do not fit its columns, or whose
   * lookups and rollups do not fit the relationships and entities stored, or that would make
   * computed columns read each other in a cycle.
   */
  async #checkComputed(entity: Entity): Promise<void> {
    const issues = entityIssues(entity);
    if (issues.length === 0 && hasComputed(entity)) {
      const entities = new Map((await this.#storage.list<Entity>('entities')).map((e) => [e.key, e.value]));
      entities.set(entity.name, entity);
      const relationships = (await this.#storage.list<Relationship>('relationships')).map((r) => r.value);
      issues.push(...relatedIssues(entity, entities, relationships));
    }
    if (issues.length > 0) throw new ValidationError(issues);
  }

  /** Who changes a definition: the one given, else this view's principal (undefined for the engine's own catalog). */
  async #author(options: DefinitionWriteOptions): Promise<DefinitionAuthor | undefined> {
    if (options.by) return options.by;
    if (!this.#grants) return undefined;
    const { id, kind } = (await this.#grants()).principal;
    return { id, kind };
  }

  /** Refuses an entity whose readable sheet has a header row that does not name its stored columns. */
  async #checkSheet(entity: Entity): Promise<void> {
    const issues = await sheetHeaderIssues(storedEntity(entity), this.#writer.sheets);
    if (issues.length > 0) throw new ValidationError(issues);
  }

  /**
   * The definition of an entity. In a principal's view: with `definitions.read`, or `entity.read` or
   * `entity.write` on the entity, and without the columns hidden from it.
   * @throws {@link NotFoundError}; {@link ForbiddenError} in a view that may not see it.
   */
  async getDefinition(name: string): Promise<Entity> {
    await this.#ready();
    const entity = await this.#storage.get<Entity>('entities', name);
    if (!entity) throw new NotFoundError('entity', name);
    return this.#shown(name, entity, await this.#access());
  }

  /**
   * Throws what {@link getDefinition} throws, and nothing else: for a caller that needs to know the
   * entity exists and may be seen, not its definition (no copy of it is made). @internal
   */
  async requireDefinition(name: string): Promise<void> {
    await this.#ready();
    const entity = await this.#definition(name);
    if (!entity) throw new NotFoundError('entity', name);
    const grants = await this.#access();
    if (grants) this.#shown(name, entity, grants);
  }

  /** The definition as `grants` show it. @throws {@link ForbiddenError} when they may not see it. */
  #shown(name: string, entity: Entity, grants: Grants | undefined): Entity {
    if (!grants) return entity;
    const shown = shownDefinition(grants, entity);
    if (!shown)
      throw new ForbiddenError(
        `${grants.principal.kind} "${grants.principal.id}" may not see entity "${name}": it needs definitions.read, entity.read or entity.write on it`,
        'entity.read',
      );
    return shown;
  }

  /**
   * Every entity definition, ordered by name (in a principal's view: those it may see, as it sees
   * them). @throws {@link ForbiddenError} in a view that may see no entity at all.
   */
  async listEntities(): Promise<Entity[]> {
    await this.#ready();
    const all = (await this.#storage.list<Entity>('entities')).map((e) => e.value);
    const grants = await this.#access();
    if (!grants) return all;
    // A principal that may see no entity at all is refused, as the other registries refuse a list.
    if (!['definitions.read', 'entity.read', 'entity.write'].some((p) => grants.allowsAny(p as Permission)))
      throw new ForbiddenError(
        `${grants.principal.kind} "${grants.principal.id}" may not list entities: it needs definitions.read, entity.read or entity.write`,
        'definitions.read',
      );
    return all.flatMap((entity) => shownDefinition(grants, entity) ?? []);
  }

  /**
   * Creates a relationship (`POST /catalog/entity/relationship`): both entities and every named
   * column must exist, the column lists be of equal length and the paired columns of the same type.
   * @throws {@link ValidationError}, {@link NotFoundError} (unknown entity), {@link ConflictError} (name taken).
   */
  async createRelationship(
    definition: RelationshipBody,
    options: DefinitionWriteOptions = {},
  ): Promise<Relationship> {
    await this.#ready();
    await this.#mayDefine('relationships');
    const rel = parse(RelationshipSchema, definition, 'relationship');
    const source = await this.#storage.get<Entity>('entities', rel.source_entity);
    const target = await this.#storage.get<Entity>('entities', rel.target_entity);
    const missing = [
      { path: 'source_entity', name: rel.source_entity, found: source },
      { path: 'target_entity', name: rel.target_entity, found: target },
    ].filter((end) => !end.found);
    if (!source || !target)
      throw new NotFoundError('entity', missing[0]!.name, {
        issues: missing.map(({ path, name }) => ({
          code: 'not_found',
          path,
          message: `entity "${name}" does not exist`,
        })),
      });
    const issues = relationshipIssues(rel, storedEntity(source), storedEntity(target));
    if (issues.length > 0) throw new ValidationError(issues);
    const by = await this.#author(options);
    await this.#history.changing('relationship', rel.name, async () => {
      if (!(await this.#storage.put('relationships', rel.name, rel, { ifAbsent: true })))
        throw new ConflictError('relationship', rel.name);
      await this.#history.record('relationship', rel.name, 'create', rel, by);
    });
    return rel;
  }

  /** Every relationship, ordered by name (in a principal's view: those between entities it may see). */
  async listRelationships(): Promise<Relationship[]> {
    await this.#ready();
    const all = (await this.#storage.list<Relationship>('relationships')).map((r) => r.value);
    const grants = await this.#access();
    if (!grants || grants.allows('definitions.read')) return all;
    const seen = (name: string) => grants.allows('entity.read', name) || grants.allows('entity.write', name);
    return all.filter((r) => seen(r.source_entity) && seen(r.target_entity));
  }

  /**
   * Reads an entity, as the `get_entity` action does. Never throws for bad input or unreadable
   * data: problems come back in `body.error` with `body.table` columns and rows null. In a
   * principal's view only the rows its rules let it see are read, and its hidden columns are left out.
   * @throws {@link ForbiddenError} in a view without `entity.read` on the entity, or that names a
   *   column hidden from it (in `select_columns`, `filters`, `order_by`, `group_by` or `aggregates`).
   */
  async getEntity(input: GetEntityInput, options: CallOptions = {}): Promise<GetEntityOutput> {
    await this.#ready();
    const name =
      typeof input === 'object' && input !== null
        ? (input as { entity_name?: unknown }).entity_name
        : undefined;
    try {
      const entity = typeof name === 'string' ? await this.#definition(name, options) : undefined;
      if (!entity) {
        const shape = check(GetEntityInputSchema, input);
        if (!shape.ok) return failure(shape.issues.map(formatIssue));
        return failure([`entity_name: entity "${String(name)}" does not exist`]);
      }
      const grants = await this.#access();
      const { table, access } = await this.#readTable(entity, grants, options);
      if (!access || (access.rows === 'all' && access.hidden.size === 0))
        return executeRead(entity.name, table, input, this.#limits);
      return executeRead(entity.name, table, withoutHidden(entity, access, input), this.#limits, {
        rules: access.rows === 'all' ? undefined : access.rows,
      });
    } catch (error) {
      if (error instanceof ForbiddenError) throw error;
      if (isStepwireError(error)) return failure([error.message]);
      throw error;
    }
  }

  /**
   * Appends rows to an entity, all or nothing: types, primary-key uniqueness (against existing and
   * new rows) and enforced foreign keys are checked for every row before anything is written.
   * @throws {@link WriteRejectedError} naming every bad row and key; nothing is written then.
   */
  async append(name: string, rows: WritableRows, options: CallOptions = {}): Promise<WriteCount> {
    return this.#writeOne(name, rows, 'append', 'rows', options);
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
  async upsert(name: string, rows: WritableRows, options: CallOptions = {}): Promise<WriteCount> {
    return this.#writeOne(name, rows, 'upsert', 'rows', options);
  }

  /**
   * Changes rows by primary key, in place: only the columns each row gives are written. Every key
   * must exist. All or nothing.
   * @throws {@link WriteRejectedError} with code `write_conflict` when a key is missing.
   */
  async update(name: string, rows: WritableRows, options: CallOptions = {}): Promise<WriteCount> {
    return this.#writeOne(name, rows, 'update', 'rows', options);
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
  async delete(name: string, keys: WritableRows, options: CallOptions = {}): Promise<WriteCount> {
    return this.#writeOne(name, keys, 'delete', 'keys', options);
  }

  /**
   * Writes to several entities at once, all or nothing: every row of every entity is checked
   * before the first row is written, and when writing a later entity fails, the rows already
   * written to the earlier ones are taken back (overwritten with what was there before). Rows are
   * found by key under the per-sheet lock; when another writer moved them meanwhile, the write is
   * planned again (up to three times). Each write's `rows` may be a data table. Resolves to
   * `{ written }` by entity name.
   * @throws {@link WriteRejectedError} naming every bad row (at `writes[i].rows` when `rows` is no
   *   array of rows or data table); nothing is written then.
   */
  async write(writes: readonly EntityWrite[], options: CallOptions = {}): Promise<WriteResult> {
    await this.#ready();
    const issues: Issue[] = [];
    if (!Array.isArray(writes)) {
      throw new WriteRejectedError([
        {
          code: 'invalid_type',
          path: 'writes',
          message: `writes must be an array of { entity, rows, mode? }, got ${describeValue(writes)}`,
        },
      ]);
    }
    const taken = writes.map((w: unknown, i) => {
      const write = writeIssues(w, `writes[${i}]`);
      if (write.length > 0) {
        issues.push(...write);
        return { entity: '', rows: [] };
      }
      const entityWrite = w as EntityWrite;
      const rows = rowsOf(entityWrite.rows, `writes[${i}].rows`);
      if (rows.ok) return { ...entityWrite, rows: rows.value };
      issues.push(...rows.issues);
      return { ...entityWrite, rows: [] };
    });
    if (issues.length > 0) throw new WriteRejectedError(issues);
    return this.#logged(taken, async () =>
      writeEntities(this.#writer, taken, options, await this.#writeAccess()),
    );
  }

  /** One write to one entity, `rows` checked at `path`; resolves to the count of rows written. */
  async #writeOne(
    name: string,
    rows: WritableRows,
    mode: WriteMode,
    path: string,
    options: CallOptions,
  ): Promise<WriteCount> {
    await this.#ready();
    const writes = [{ entity: name, rows: entityRowsOf(rows, path), mode }];
    const result = await this.#logged(writes, async () =>
      writeEntities(this.#writer, writes, options, await this.#writeAccess()),
    );
    return { written: result.written[name] ?? 0 };
  }

  /**
   * Does a write, and in an audited view logs it: who, which entities, the mode and the primary
   * keys of the rows (never other cells), and whether it was done, denied or failed.
   */
  async #logged(writes: readonly TakenWrite[], work: () => Promise<WriteResult>): Promise<WriteResult> {
    const audit = this.#audit;
    if (!audit) return work();
    const log = async (outcome: 'success' | 'failure' | 'denied', error?: unknown) => {
      for (const w of writes) {
        const entity = await this.#definition(w.entity).catch(() => undefined);
        const code = (error as { code?: unknown } | undefined)?.code;
        await audit.audit.record({
          principal: { id: audit.principal.id, kind: audit.principal.kind },
          action: 'rows.write',
          resource: `entity:${w.entity}`,
          outcome,
          detail: {
            mode: w.mode ?? 'append',
            rows: w.rows.length,
            ...(entity ? { keys: keysOf(entity, w.rows) } : {}),
            ...(typeof code === 'string' ? { code } : {}),
          },
        });
      }
    };
    try {
      const result = await work();
      await log('success');
      return result;
    } catch (error) {
      await log(error instanceof ForbiddenError ? 'denied' : 'failure', error);
      throw error;
    }
  }

  /** What this view's principal may write of each entity; undefined for the engine's own catalog. */
  async #writeAccess(): Promise<((entity: Entity) => EntityAccess) | undefined> {
    const grants = await this.#access();
    return grants && ((entity) => grants.entity(entity, 'write'));
  }

  /** Drops cached tables (all, or one entity's), so the next read goes to the spreadsheet. */
  invalidate(entityName?: string): void {
    this.#cache.forget(entityName);
  }

  /**
   * The mapped table of an entity (read through the cache). In a principal's view, the rows it
   * sees and the columns not hidden from it (a copy, with a definition of those columns). @internal
   */
  async table(name: string, options: CallOptions = {}): Promise<{ entity: Entity; table: EntityTable }> {
    await this.#ready();
    const entity = await this.#definition(name, options);
    if (!entity) throw new NotFoundError('entity', name);
    const { table, access } = await this.#readTable(entity, await this.#access(), options);
    if (!access || (access.rows === 'all' && access.hidden.size === 0)) return { entity, table };
    return visibleTable(entity, table, access, this.#limits);
  }

  /**
   * The table of an entity with its computed columns, as `grants` may read it, and the principal's
   * access with the computed columns that read what it may not see added to the hidden ones.
   */
  async #readTable(
    entity: Entity,
    grants: Grants | undefined,
    options: CallOptions,
  ): Promise<{ table: EntityTable; access: EntityAccess | undefined }> {
    const access = grants?.entity(entity, 'read');
    // Without computed columns the table is the sheet's: nothing to compute, no source to make.
    if (!hasComputed(entity)) return { table: (await this.#cache.load(entity, options)).table, access };
    const source: ComputeSource = {
      definition: (name) => this.#definition(name, options),
      storedTable: async (stored) => (await this.#cache.load(stored, options)).table,
      relationships: async () =>
        (await this.#storage.list<Relationship>('relationships')).map((r) => r.value),
    };
    const computed = await this.#computed.table(entity, source, grants && readAccessOf(grants));
    if (!access || computed.hidden.size === 0) return { table: computed.table, access };
    return {
      table: computed.table,
      access: { ...access, hidden: new Set([...access.hidden, ...computed.hidden]) },
    };
  }

  /** Times computed columns were computed (not found kept) since the engine started. @internal */
  get computations(): number {
    return this.#computed.computations;
  }

  /**
   * The stored definition of an entity, read from storage on every call (so a change another
   * engine stored is seen at once), but the same object as last time while it is unchanged: compared
   * by its stored JSON text when the storage gives it (`getText`), else value by value. Callers
   * must not change it.
   */
  async #definition(name: string, options?: CallOptions): Promise<Entity | undefined> {
    const known = this.#definitions.get(name);
    const text = this.#storage.getText ? await this.#storage.getText('entities', name, options) : undefined;
    if (text !== undefined) {
      if (known !== undefined && known.text === text) return known.entity;
      return this.#keep(name, JSON.parse(text) as Entity, text);
    }
    const entity = await this.#storage.get<Entity>('entities', name, options);
    if (entity === undefined) {
      this.#definitions.delete(name);
      return undefined;
    }
    if (known !== undefined && sameJson(known.entity, entity)) return known.entity;
    return this.#keep(name, entity, undefined);
  }

  #keep(name: string, entity: Entity, text: string | undefined): Entity {
    this.#definitions.set(name, { entity, text });
    return entity;
  }
}

/** What `grants` may read of each entity, for computed columns reading through relationships. */
function readAccessOf(grants: Grants): ReadAccessOf {
  return (entity) => {
    try {
      const access = grants.entity(entity, 'read');
      return access.rows === 'all' && access.hidden.size === 0 ? undefined : access;
    } catch (error) {
      if (error instanceof ForbiddenError) return 'none';
      throw error;
    }
  };
}

/** Whether two JSON values are equal (objects key by key, in any order). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameJson(x, b[i]));
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every(
    (k) =>
      Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/** What makes `write` no write to one entity: no object, no entity name, an unknown mode. */
function writeIssues(write: unknown, path: string): Issue[] {
  if (typeof write !== 'object' || write === null || Array.isArray(write))
    return [
      {
        code: 'invalid_type',
        path,
        message: `${path} must be an object { entity, rows, mode? }, got ${describeValue(write)}`,
      },
    ];
  const { entity, mode } = write as { entity?: unknown; mode?: unknown };
  const issues: Issue[] = [];
  if (typeof entity !== 'string' || entity === '')
    issues.push({
      code: 'invalid_type',
      path: `${path}.entity`,
      message: `${path}.entity must be the name of an entity, got ${describeValue(entity)}`,
    });
  // A misspelt mode is refused, never taken for another: an unknown one would append, or drop updates.
  if (mode !== undefined && !(WRITE_MODES as readonly unknown[]).includes(mode))
    issues.push({
      code: 'invalid_value',
      path: `${path}.mode`,
      message: `${path}.mode must be one of ${WRITE_MODES.map((m) => `"${m}"`).join(', ')}, got ${describeValue(mode)}`,
    });
  return issues;
}

/** Where an audited view logs writes, and as whom. @internal */
export interface WriteAudit {
  principal: { id: string; kind: 'user' | 'key' | 'service' };
  audit: { record(entry: AuditRecord): Promise<unknown> };
}

/** Most keys one audit entry lists. */
const MAX_LOGGED_KEYS = 100;

/** The primary keys of written rows (objects of the key columns), the first {@link MAX_LOGGED_KEYS}. */
function keysOf(entity: Entity, rows: EntityRows): Record<string, unknown>[] {
  const positions = entity.primary_key.map((k) => entity.columns.findIndex((c) => c.name === k));
  return rows.slice(0, MAX_LOGGED_KEYS).map((row) => {
    const key: Record<string, unknown> = {};
    entity.primary_key.forEach((name, k) => {
      const value = Array.isArray(row) ? row[positions[k]!] : (row as Record<string, unknown> | null)?.[name];
      setOwn(key, name, value === undefined ? null : value);
    });
    return key;
  });
}

/** The definition as `grants` show it (hidden columns left out), or undefined when it may not see it. */
function shownDefinition(grants: Grants, entity: Entity): Entity | undefined {
  const name = entity.name;
  const reads = grants.allows('entity.read', name);
  if (!reads && !grants.allows('entity.write', name) && !grants.allows('definitions.read')) return undefined;
  const access = reads ? grants.entity(entity, 'read') : undefined;
  if (!access || access.hidden.size === 0) return entity;
  return { ...entity, columns: entity.columns.filter((c) => !access.hidden.has(c.name)) };
}

/**
 * The read `input` with the hidden columns of `access` out of its selection (every visible column
 * when it selects none).
 * @throws {@link ForbiddenError} naming a hidden column it selects, filters or orders by.
 */
function withoutHidden(entity: Entity, access: EntityAccess, input: GetEntityInput): GetEntityInput {
  if (access.hidden.size === 0) return input;
  const operation = (
    typeof input.operation === 'object' && input.operation !== null ? input.operation : {}
  ) as GetEntityInput['operation'];
  const named: [string, unknown][] = [
    ...(operation.select_columns ?? []).map((s, i): [string, unknown] => [
      `operation.select_columns[${i}].column`,
      s?.column,
    ]),
    ...(operation.filters ?? []).map((f, i): [string, unknown] => [
      `operation.filters[${i}].column`,
      f?.column,
    ]),
    ...(operation.order_by ?? []).map((o, i): [string, unknown] => [
      `operation.order_by[${i}].column`,
      o?.column,
    ]),
    ...(Array.isArray(operation.group_by) ? operation.group_by : []).map((g, i): [string, unknown] => [
      `operation.group_by[${i}]`,
      g,
    ]),
    ...(Array.isArray(operation.aggregates) ? operation.aggregates : []).map((a, i): [string, unknown] => [
      `operation.aggregates[${i}].column`,
      a?.column,
    ]),
  ];
  for (const [path, column] of named)
    if (typeof column === 'string' && access.hidden.has(column))
      throw new ForbiddenError(
        `${path}: column "${column}" of entity "${entity.name}" is hidden from you`,
        'entity.read',
      );
  if (operation.select_columns && operation.select_columns.length > 0) return input;
  // A grouped read answers its group columns and aggregates only, all checked above.
  if (
    (Array.isArray(operation.group_by) && operation.group_by.length > 0) ||
    (Array.isArray(operation.aggregates) && operation.aggregates.length > 0)
  )
    return input;
  const select_columns = entity.columns
    .filter((c) => !access.hidden.has(c.name))
    .map((c) => ({ column: c.name }));
  return { ...input, operation: { ...operation, select_columns } };
}

/** The rows of `table` that `access` lets a principal see, without its hidden columns: a copy. */
function visibleTable(
  entity: Entity,
  table: EntityTable,
  access: EntityAccess,
  limits: CatalogLimits,
): { entity: Entity; table: EntityTable } {
  const shown = entity.columns.flatMap((c, i) => (access.hidden.has(c.name) ? [] : [i]));
  const definition =
    shown.length === entity.columns.length
      ? entity
      : { ...entity, columns: shown.map((i) => entity.columns[i]!) };
  let rows: number[];
  if (access.rows === 'all') rows = Array.from({ length: table.length }, (_, i) => i);
  else {
    const all = Array.from({ length: table.length }, (_, i) => i);
    const seen = rowsMatchingRules(entity.name, table, access.rows, limits, all);
    rows = all.filter((i) => seen.has(i));
  }
  const values = rows.map((i) => {
    const row = tableRow(table, i);
    return shown.map((c) => row[c]);
  });
  return { entity: definition, table: appendRows(createTable(definition.columns, 0), values) };
}

function failure(errors: string[]): GetEntityOutput {
  return { body: { table: { columns: null, rows: null }, error: { is_error: true, errors } } };
}
