/**
 * The catalog's copy of each entity's sheet: read once, kept while the adapter's revision of the
 * sheet stays the same, and kept in step with the catalog's own appends.
 * @module
 */
import type { CallOptions, CellRows, CellValue, SheetRef, SpreadsheetAdapter } from '../adapters/types.js';
import { BOOLEAN_NULL, type ColumnData } from '../query/entity-table.js';
import type { Entity } from '../schema/index.js';
import { isKeyed } from './keyed-commit.js';
import { appendRows, headerIndexes, mapSheet, type EntityTable } from './sheet-mapping.js';
import { keyColumns, type LoadedSheet, type WritePlan } from './write-plan.js';

/** Loaded sheets by entity name. @internal */
export class SheetCache {
  readonly #sheets: SpreadsheetAdapter;
  readonly #cache = new Map<string, LoadedSheet>();

  constructor(sheets: SpreadsheetAdapter) {
    this.#sheets = sheets;
  }

  /** Forgets one entity's sheet, or all. */
  forget(entityName?: string): void {
    if (entityName === undefined) this.#cache.clear();
    else this.#cache.delete(entityName);
  }

  /** The entity's sheet: from the cache while its revision holds, else read and mapped. */
  async load(entity: Entity, options: CallOptions): Promise<LoadedSheet> {
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
    const loaded: LoadedSheet = {
      table,
      headerIndexes: indexes,
      headerWidth: Math.max(header.length, ...indexes.map((i) => i + 1)),
      revision,
      keyCells: rawKeyCells(entity, table, cells, indexes),
    };
    if (revision !== undefined) this.#cache.set(entity.name, loaded);
    return loaded;
  }

  /**
   * Keeps the cache in step with a plan just written: an append's rows added, a replace's rows in
   * place of the old ones; a write by key drops the entity (it is read again).
   */
  async committed(plan: WritePlan): Promise<void> {
    const { entity, loaded } = plan;
    if (isKeyed(plan.mode)) return void this.#cache.delete(entity.name);
    const config = entity.spreadsheet_config;
    const ref: SheetRef = { spreadsheet_id: config.spreadsheet_id, sheet_name: config.sheet_name };
    let revision: string | number | undefined;
    try {
      revision = this.#sheets.revision ? await this.#sheets.revision(ref) : undefined;
    } catch {
      // The rows are written; only the copy cannot be kept. It is read again next time, and the
      // write is not reported as failed (which would leave it half taken back).
      return void this.#cache.delete(entity.name);
    }
    // Rows written hold their key cells as the table holds them: no entries in keyCells.
    const base =
      plan.mode === 'replace'
        ? { ...loaded, table: mapSheet(entity, [headerCells(entity, loaded)]), keyCells: new Map() }
        : loaded;
    this.#cache.set(entity.name, { ...base, table: appendRows(base.table, plan.rows), revision });
  }
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
