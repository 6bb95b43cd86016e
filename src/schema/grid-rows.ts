/**
 * How many rows datagrids show: the default page, and the bound of one screen's grids together.
 * @module
 */

/** Rows a datagrid shows a page when its config gives no `page_size`. @internal */
export const DEFAULT_GRID_ROWS = 20;

/** The most rows the datagrids of one screen may show in one view, all together. @internal */
export const MAX_SCREEN_GRID_ROWS = 5000;
