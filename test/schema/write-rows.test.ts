import { describe, expect, it } from 'vitest';
import { WriteEntityInputSchema, WriteRowsBodySchema } from '../../src/schema/index.js';

describe('rows of a write', () => {
  it("are passed on as given, not copied: each row object and array is the caller's own", () => {
    const rows = [
      { id: 1, name: 'Ada' },
      [2, 'Grace'],
      Object.assign(Object.create(null) as object, { id: 3 }),
    ];
    const parsed = WriteEntityInputSchema.parse({ entity_name: 'customers', rows });
    expect(parsed.rows).toEqual(rows);
    (parsed.rows as unknown[]).forEach((row, i) => expect(row).toBe(rows[i]));
    const table = { columns: ['id', { name: 'name' }], rows: [[1, 'Ada']] };
    const parsedTable = WriteRowsBodySchema.parse({ rows: table }).rows as typeof table;
    expect(parsedTable.rows[0]).toBe(table.rows[0]);
  });

  it('refuses a row that is not a plain object or an array, naming the field', () => {
    for (const row of [1, 'text', null, new Date(0), new Map()]) {
      const result = WriteEntityInputSchema.safeParse({ entity_name: 'customers', rows: [{ id: 1 }, row] });
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
        ['rows', 'rows must be an array of objects, or a data table { columns, rows }'],
      ]);
    }
    const table = WriteRowsBodySchema.safeParse({ rows: { columns: ['id'], rows: [[1], { id: 2 }] } });
    expect(table.success).toBe(false);
  });

  it('refuses an unknown property, such as a misspelt write_mode, in the input and the HTTP body', () => {
    const input = WriteEntityInputSchema.safeParse({ entity_name: 'orders', write_mod: 'delete', rows: [] });
    expect(input.error?.issues).toEqual([
      expect.objectContaining({ code: 'unrecognized_keys', keys: ['write_mod'] }),
    ]);
    const body = WriteRowsBodySchema.safeParse({ write_mod: 'delete', rows: [] });
    expect(body.error?.issues).toEqual([
      expect.objectContaining({ code: 'unrecognized_keys', keys: ['write_mod'] }),
    ]);
  });
});
