import { z } from 'zod';
import { DataTableSchema } from './data-table.js';

/** Filter operators of the entity read. */
export const FILTER_OPERATORS = [
  'EQUALS',
  'NOT_EQUALS',
  'GREATER_THAN',
  'GREATER_THAN_OR_EQUALS',
  'LESS_THAN',
  'LESS_THAN_OR_EQUALS',
  'CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
  'IN',
  'NOT_IN',
  'IS_NULL',
  'IS_NOT_NULL',
] as const;

/** Types a filter value may be coerced to. */
export const VALUE_TYPES = ['NUMBER', 'STRING', 'BOOLEAN'] as const;

/** Most `select_columns` of one read. */
export const MAX_SELECTED = 1000;
/** Most `filters` of one read: each is a pass over the rows the ones before let through. */
export const MAX_FILTERS = 100;
/** Most `order_by` keys of one read. */
export const MAX_ORDER_KEYS = 100;
/** Most `group_by` columns of one read. */
export const MAX_GROUP_COLUMNS = 100;
/** Most `aggregates` of one read. */
export const MAX_AGGREGATES = 100;

/** Aggregate functions of the entity read. */
export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'min', 'max', 'avg'] as const;

/** Sort directions. */
export const DIRECTIONS = ['ASC', 'DESC'] as const;

/** A filter operator. */
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** One selected column, optionally renamed. */
export const SelectColumnSchema = z.strictObject({
  column: z.string(),
  alias: z.string().optional(),
});

/** One filter; filters are joined by AND. */
export const FilterSchema = z.strictObject({
  column: z.string(),
  operator: z.enum(FILTER_OPERATORS),
  value_type: z.enum(VALUE_TYPES).optional(),
  value: z.unknown().optional(),
});

/** One sort key. */
export const OrderBySchema = z.strictObject({
  column: z.string(),
  direction: z.enum(DIRECTIONS),
});

/**
 * One aggregate of a read: `count` without `column` counts rows, with `column` the non-null cells;
 * `sum`, `avg`, `min`, `max` need a `column`. The result column is named `alias`.
 */
export const AggregateSchema = z.strictObject({
  function: z.enum(AGGREGATE_FUNCTIONS),
  column: z.string().optional(),
  alias: z.string().min(1),
});

/**
 * The read operation: select, filter, group and aggregate, order. All parts optional; no other
 * properties. With `group_by` or `aggregates` the table has the group columns, then the aliases.
 */
export const OperationSchema = z.strictObject({
  select_columns: z.array(SelectColumnSchema).max(MAX_SELECTED).optional(),
  filters: z.array(FilterSchema).max(MAX_FILTERS).optional(),
  group_by: z.array(z.string()).max(MAX_GROUP_COLUMNS).optional(),
  aggregates: z.array(AggregateSchema).max(MAX_AGGREGATES).optional(),
  order_by: z.array(OrderBySchema).max(MAX_ORDER_KEYS).optional(),
});

/** Paging: `page_number` starts at 1; `page_size` defaults to 100. */
const paging = {
  page_size: z.number().int().min(1).optional(),
  page_number: z.number().int().min(1).optional(),
};

/** Input of the `get_entity` action. Strict: no other properties at any level. */
export const GetEntityInputSchema = z.strictObject({
  entity_name: z.string().min(1),
  operation: OperationSchema,
  ...paging,
});

/** Body of `POST /catalog/entities/{name}/read`: the `get_entity` input without `entity_name`. */
export const ReadEntityBodySchema = z.strictObject({
  operation: OperationSchema.optional(),
  ...paging,
});

/** Output of the `get_entity` action: the data table, and the errors when the read failed. */
export const GetEntityOutputSchema = z.object({
  body: z.object({
    table: DataTableSchema,
    error: z
      .object({
        is_error: z.boolean(),
        errors: z.array(z.string()).optional(),
      })
      .optional(),
  }),
});

/** Input of the `get_entity` action. */
export type GetEntityInput = z.infer<typeof GetEntityInputSchema>;
/** The read operation. */
export type Operation = z.infer<typeof OperationSchema>;
/** One filter of a read. */
export type Filter = z.infer<typeof FilterSchema>;
/** One sort key of a read. */
export type OrderBy = z.infer<typeof OrderBySchema>;
/** One aggregate of a read. */
export type Aggregate = z.infer<typeof AggregateSchema>;
/** An aggregate function. */
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];
/** One selected column of a read. */
export type SelectColumn = z.infer<typeof SelectColumnSchema>;
/** Output of the `get_entity` action. */
export type GetEntityOutput = z.infer<typeof GetEntityOutputSchema>;
/** Body of the read endpoint. */
export type ReadEntityBody = z.infer<typeof ReadEntityBodySchema>;
