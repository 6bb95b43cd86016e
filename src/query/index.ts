/**
 * The entity read: `executeRead` runs a `get_entity` input over a columnar {@link EntityTable}.
 * @module
 */
export { executeRead, readFailure } from './execute.js';
export type { ReadLimits } from './plan.js';
export { appendRows, tableRow, type EntityTable, type ColumnData } from './entity-table.js';
