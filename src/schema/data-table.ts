import { z } from 'zod';

/** Configuration of a `string` column of a data table. */
export const StringConfigSchema = z.object({
  /** The text holds JSON. */
  is_json: z.boolean(),
  /** The text is a URL (rendered as a link). */
  is_url: z.boolean(),
});

/** Configuration of a `number` column of a data table. */
export const NumberConfigSchema = z.object({
  /** Render with latin (ASCII) digits. */
  latin_numbering: z.boolean(),
  min: z.number().int().optional(),
  max: z.number().int().optional(),
  step: z.number().optional(),
});

/** Configuration without fields (`boolean`, `date`, `datetime`). */
export const EmptyConfigSchema = z.object({});

/** A column of a data table. */
export const ColumnSchema = z.object({
  name: z.string(),
  type: z.string().optional(),
  string: StringConfigSchema.optional(),
  number: NumberConfigSchema.optional(),
  boolean: EmptyConfigSchema.optional(),
  date: EmptyConfigSchema.optional(),
  datetime: EmptyConfigSchema.optional(),
});

/** A data table: the result of entity reads. Both fields are null when there is no data. */
export const DataTableSchema = z.object({
  columns: z.array(ColumnSchema).nullable(),
  rows: z.array(z.array(z.unknown())).nullable(),
});

/** A column of a data table. */
export type Column = z.infer<typeof ColumnSchema>;
/** A data table: `columns` and `rows` (arrays of cell values in column order). */
export type DataTable = z.infer<typeof DataTableSchema>;
/** `string` column configuration. */
export type StringConfig = z.infer<typeof StringConfigSchema>;
/** `number` column configuration. */
export type NumberConfig = z.infer<typeof NumberConfigSchema>;

/** Rows of cells as objects keyed by column name; a missing cell is null. */
export function rowObjects(
  columns: readonly { name: string }[],
  rows: readonly (readonly unknown[])[],
): Record<string, unknown>[] {
  // fromEntries defines own properties, so a column named `__proto__` stays a plain key.
  return rows.map((row) => Object.fromEntries(columns.map((column, i) => [column.name, row[i] ?? null])));
}
