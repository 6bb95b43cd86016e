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

/** A column of a data table as rows are given (to write, or to loop over): a name, or an object with a `name`. */
export type TableColumn = string | { readonly name: string };

/** Rows given as a data table: columns as names or `{ name }`, rows as arrays of cells in column order. */
export interface RowsTable {
  columns: readonly TableColumn[];
  rows: readonly (readonly unknown[])[];
}
