/**
 * The check of an entity's sheet when the entity is registered: when the sheet can be read, its
 * header row must name every column (and so every primary-key column). A sheet that cannot be read
 * now (not created yet, out of reach) is checked at the first read instead.
 * @module
 */
import type { CallOptions, SpreadsheetAdapter } from '../adapters/types.js';
import { isStepwireError, type Issue } from '../errors/index.js';
import type { Entity } from '../schema/index.js';
import { headerIndexes } from './sheet-mapping.js';

/**
 * What keeps the header row of `entity`'s sheet from mapping its columns: a `missing_column` or
 * `duplicate_column` issue at `spreadsheet_config`, and a `missing_key_column` issue at
 * `primary_key.<i>` for each key column the header lacks. Empty when the sheet maps, or cannot be read.
 * @internal
 */
export async function sheetHeaderIssues(
  entity: Entity,
  sheets: SpreadsheetAdapter,
  options: CallOptions = {},
): Promise<Issue[]> {
  const { spreadsheet_id, sheet_name, origin } = entity.spreadsheet_config;
  let header;
  try {
    const [rows = []] = await sheets.read(
      [{ spreadsheet_id, sheet_name, row: origin.row, col: origin.col, rows: 1 }],
      options,
    );
    header = rows[0] ?? [];
  } catch {
    return [];
  }
  try {
    headerIndexes(entity, header);
    return [];
  } catch (error) {
    if (!isStepwireError(error)) throw error;
    const issues: Issue[] = [{ code: error.code, path: 'spreadsheet_config', message: error.message }];
    if (error.code !== 'missing_column') return issues;
    const named = new Set(
      header.map((cell) => (cell === null || cell === undefined ? '' : String(cell).trim().normalize('NFC'))),
    );
    entity.primary_key.forEach((key, i) => {
      if (!named.has(key.normalize('NFC')))
        issues.push({
          code: 'missing_key_column',
          path: `primary_key.${i}`,
          message: `primary key column "${key}" is not in the header row of sheet "${sheet_name}" (spreadsheet "${spreadsheet_id}")`,
        });
    });
    return issues;
  }
}
