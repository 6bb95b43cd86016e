/**
 * The catalog's copy of each entity's sheet: read once, kept while the entity's definition (the same
 * `Entity` object) and the adapter's revision of the sheet stay the same, and kept in step with the
 * catalog's own appends when the adapter's revision shows no other writer came in between.
 * @module
 */
import type { CallOptions, CellRows, CellValue, SheetRef, SpreadsheetAdapter } from '../adapters/types.js';
import { BOOLEAN_NULL, type ColumnData } from '../query/entity-table.js';
import type { Entity } from '../schema/index.js';
import { isKeyed } from './keyed-commit.js';
import { appendRows, headerIndexes, mapSheet, type EntityTable } from './sheet-mapping.js';
import { keyColumns, type LoadedSheet, type WritePlan } from './write-plan.js';

/** A kept sheet and the definition it was mapped by. */
interface Entry {
  entity: Entity;
  loaded: LoadedSheet;
}

/**
 * Loaded sheets by entity name. An entry serves only the `Entity` object it was mapped by: the
 * catalog hands the same object for as long as the stored definition is unchanged (see
 * `Catalog#definition`), and a new one once it changes, so a redefined entity is read again. @internal
 */
export class SheetCache {
  readonly #sheets: SpreadsheetAdapter;
  readonly #cache = new Map<string, Entry>();
  /** Times each entity was forgotten, and all were: a load keeps its result only when neither moved meanwhile. */
  readonly #forgets = new Map<string, number>();
  #clears = 0;

  constructor(sheets: SpreadsheetAdapter) {
    this.#sheets = sheets;
  }

  /**
   * Forgets one entity's sheet, or all. A load already under way then does not keep what it read
   * (it may have been read by a definition replaced meanwhile).
   */
  forget(entityName?: string): void {
    if (entityName === undefined) {
      this.#cache.clear();
      this.#clears++;
    } else {
      this.#cache.delete(entityName);
      this.#forgets.set(entityName, (this.#forgets.get(entityName) ?? 0) + 1);
    }
  }

  /**
   * The entity's sheet: from the cache while it was mapped by this very `entity` and its revision
   * holds, else read and mapped.
   */
  async load(entity: Entity, options: CallOptions): Promise<LoadedSheet> {
    const name = entity.name;
    const config = entity.spreadsheet_config;
    const ref: SheetRef = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
    const clears = this.#clears;
    const forgets = this.#forgets.get(name);
    const revision = this.#sheets.revision ? await this.#sheets.revision(ref) : undefined;
    const cached = this.#cache.get(name);
    if (cached && cached.entity === entity && revision !== undefined && cached.loaded.revision === revision)
      return cached.loaded;
    const [cells = []] = await this.#sheets.read(
      [{ ...ref, row: config.origin.row, col: config.origin.col }],
      options,
    );
    const table = mapSheet(entity, cells);
    const header = cells[0] ?? [];
    const indexes = headerIndexes(entity, header);
    const loaded: LoadedSheet = {
      table,
      headerIndexes: indexes,
      headerWidth: Math.max(header.length, ...indexes.map((i) => i + 1)),
      revision,
      keyCells: rawKeyCells(entity, table, cells, indexes),
    };
    if (revision !== undefined && this.#clears === clears && this.#forgets.get(name) === forgets)
      this.#cache.set(name, { entity, loaded });
    return loaded;
  }

  /**
   * Keeps the cache in step with a plan just written: an append's rows added, a replace's rows in
   * place of the old ones, when the sheet's revision after the write is the one the write itself
   * made (see {@link ownRevision}). Otherwise, and after a write by key, the entity is dropped (read
   * again next time).
   */
  async committed(plan: WritePlan): Promise<void> {
    const { entity, loaded } = plan;
    const expected = ownRevision(plan);
    if (isKeyed(plan.mode) || expected === undefined || !this.#sheets.revision)
      return void this.#cache.delete(entity.name);
    const config = entity.spreadsheet_config;
    const ref: SheetRef = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
    let revision: string | number | undefined;
    try {
      revision = await this.#sheets.revision(ref);
    } catch {
      // The rows are written; only the copy cannot be kept. It is read again next time, and the
      // write is not reported as failed (which would leave it half taken back).
      return void this.#cache.delete(entity.name);
    }
    // Another writer came in between (or the revision is no count of changes): read it again.
    if (revision !== expected) return void this.#cache.delete(entity.name);
    // Rows written hold their key cells as the table holds them: no entries in keyCells.
    const base =
      plan.mode === 'replace'
        ? { ...loaded, table: mapSheet(entity, [headerCells(entity, loaded)]), keyCells: new Map() }
        : loaded;
    this.#cache.set(entity.name, {
      entity,
      loaded: { ...base, table: appendRows(base.table, plan.rows), revision },
    });
  }
}

/**
 * The revision the sheet has after an append or replace when no one else wrote to it since it was
 * loaded; undefined when that cannot be known. Only a revision that is a number tells: it is taken
 * as a count of the sheet's changes (the in-memory adapter's is), each append, write or update
 * adding one. A string revision (a file's, say) says only that the sheet changed, not by whom.
 */
function ownRevision(plan: WritePlan): number | undefined {
  const before = plan.loaded.revision;
  if (typeof before !== 'number') return undefined;
  // As `commitPlan` writes: nothing for an append of no rows, or a replace of an empty table by none.
  const wrote = plan.rows.length > 0 || (plan.mode === 'replace' && plan.loaded.table.length > 0);
  return wrote ? before + 1 : before;
}

/** The raw key cells of the rows where they differ from the table's values (see `LoadedSheet.keyCells`). */
function rawKeyCells(
  entity: Entity,
  table: EntityTable,
  cells: CellRows,
  indexes: readonly number[],
): Map<number, CellValue[]> {
  const keys = keyColumns(entity);
  const rows = new Set<number>();
  for (const c of keys) differingRows(table.data[c]!, cells, indexes[c]!, table.length, rows);
  const out = new Map<number, CellValue[]>();
  for (const r of [...rows].sort((a, b) => a - b))
    out.set(
      r,
      keys.map((c) => cells[r + 1]![indexes[c]!] ?? null),
    );
  return out;
}

/** Adds to `out` the rows whose raw cell (at header position `h`) is not the table's value. */
function differingRows(data: ColumnData, cells: CellRows, h: number, length: number, out: Set<number>): void {
  if (data instanceof Float64Array) {
    for (let r = 0; r < length; r++) {
      const raw = cells[r + 1]![h];
      const x = data[r]!;
      if (raw !== x && !(x !== x && raw == null)) out.add(r);
    }
  } else if (data instanceof Uint8Array) {
    for (let r = 0; r < length; r++) {
      const raw = cells[r + 1]![h];
      const code = raw === true ? 1 : raw === false ? 0 : raw == null ? BOOLEAN_NULL : -1;
      if (code !== data[r]) out.add(r);
    }
  } else {
    for (let r = 0; r < length; r++) {
      const raw = cells[r + 1]![h];
      const s = data[r];
      if (raw !== s && !(s === null && raw == null)) out.add(r);
    }
  }
}

function headerCells(entity: Entity, loaded: LoadedSheet): CellValue[] {
  const header: CellValue[] = new Array<CellValue>(loaded.headerWidth).fill(null);
  entity.columns.forEach((column, c) => (header[loaded.headerIndexes[c]!] = column.name));
  return header;
}
