/**
 * A small time-bounded cache of range reads, keyed by spreadsheet and A1 range, dropped per sheet
 * when the adapter itself writes to that sheet. Each sheet has a generation, counted up by every
 * drop: a read keeps its answer only when no drop happened between sending it and the answer, so an
 * answer overtaken by a write (rows as they were before it) is never cached.
 * @module
 */
import type { CellRows, SheetRef } from '../types.js';

interface Entry {
  expires: number;
  rows: CellRows;
  sheet: string;
}

/** @internal */
export class ReadCache {
  readonly #ttlMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #generations = new Map<string, number>();

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** A copy of the cached rows, or `undefined` when absent or expired. */
  get(spreadsheetId: string, a1: string): CellRows | undefined {
    const key = cacheKey(spreadsheetId, a1);
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return copyRows(entry.rows);
  }

  /** The sheet's generation: take it before sending a read, and hand it to {@link set} with the answer. */
  generation(ref: SheetRef): number {
    return this.#generations.get(sheetKey(ref)) ?? 0;
  }

  /** Keeps the rows of a read sent at `generation`; nothing when the sheet was dropped since. */
  set(ref: SheetRef, a1: string, rows: CellRows, generation: number): void {
    if (generation !== this.generation(ref)) return;
    this.#entries.set(cacheKey(ref.spreadsheet_id, a1), {
      expires: Date.now() + this.#ttlMs,
      rows: copyRows(rows),
      sheet: sheetKey(ref),
    });
  }

  /** Drops every entry of a sheet, and the answers of its reads still in flight. */
  invalidate(ref: SheetRef): void {
    const sheet = sheetKey(ref);
    this.#generations.set(sheet, (this.#generations.get(sheet) ?? 0) + 1);
    for (const [key, entry] of this.#entries) if (entry.sheet === sheet) this.#entries.delete(key);
  }
}

function cacheKey(spreadsheetId: string, a1: string): string {
  return `${spreadsheetId}\u0000${a1}`;
}

function sheetKey(ref: SheetRef): string {
  return `${ref.spreadsheet_id}\u0000${ref.sheet_name}`;
}

/** @internal */
export function copyRows(rows: CellRows): CellRows {
  return rows.map((row) => row.slice());
}
