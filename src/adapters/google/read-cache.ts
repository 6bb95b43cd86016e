/**
 * A small time-bounded cache of range reads, keyed by spreadsheet and A1 range, dropped per sheet
 * when the adapter itself writes to that sheet.
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

  set(ref: SheetRef, a1: string, rows: CellRows): void {
    this.#entries.set(cacheKey(ref.spreadsheet_id, a1), {
      expires: Date.now() + this.#ttlMs,
      rows: copyRows(rows),
      sheet: sheetKey(ref),
    });
  }

  /** Drops every entry of a sheet. */
  invalidate(ref: SheetRef): void {
    const sheet = sheetKey(ref);
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
