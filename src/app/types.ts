import type { Issue } from '../errors/index.js';
import type { RunRecord } from '../schema/index.js';
import type { Column, FormItem } from '../schema/index.js';

/** The query parameters of a screen: name to value (the first value of a repeated name). */
export type ScreenQuery = Record<string, string>;

/** A screen resolved for display: its rows of components, each with its data. */
export interface ResolvedScreen {
  /** The application's name. */
  app: string;
  /** The screen's url segment (`/screens/<url>`). */
  url: string;
  /** The url of the application's start screen. */
  startUrl: string;
  /** The query parameters the screen was resolved with. */
  query: ScreenQuery;
  /** Rows of components, in config order. */
  rows: ResolvedComponent[][];
}

/** A component of a resolved screen. */
export type ResolvedComponent =
  ResolvedText | ResolvedForm | ResolvedDatagrid | ResolvedButton | ResolvedChart | ResolvedMetric;

/** A `text` component with `{{query_params.x}}` filled in (as text, never markup). */
export interface ResolvedText {
  /** The component type. */
  type: 'text';
  /** Component name. */
  name: string;
  /** True when the config says `type: "heading"`. */
  heading: boolean;
  /** The text to show. */
  contents: string;
}

/** A `form` component: its items with their current values and errors. */
export interface ResolvedForm {
  /** The component type. */
  type: 'form';
  /** Component name; also the last path segment of the form's POST address. */
  name: string;
  /** The workflow the form runs (a `sync` job), or null. */
  workflow: string | null;
  /** The entity the form writes a row of (a `write` job), or null. */
  entity: string | null;
  /** The text of the submit button: `Submit` (a workflow), `Save` (a row), `Delete` (a delete). */
  submitLabel: string;
  /**
   * A one-time submission token sent back with the form (field `_submission`) when it runs a
   * workflow or deletes a row: submitting twice with one token runs the workflow (deletes the row)
   * once, and both answers are the same. Every render gives a new token.
   */
  submission: string | null;
  /** The form items, in config order. */
  items: ResolvedFormItem[];
  /** A problem with the whole form (a failed run), or null. */
  error: string | null;
}

/** One item of a form. */
export interface ResolvedFormItem {
  /** The label shown next to the input. */
  label: string;
  /** The workflow input property it fills; also the input's `name`. */
  property: string;
  /** The item type from the config. */
  type: FormItem['type'];
  /** Whether a value must be given. */
  required: boolean;
  /** `min`, `max` and `step` of a number item, when configured. */
  numberConfig: { min?: number; max?: number; step?: number } | null;
  /** The value as last submitted (re-rendered after a failure), or null. */
  value: string | null;
  /** What is wrong with the submitted value, or null. */
  error: string | null;
  /** The item's `help`: a line shown under the field, or null. */
  help: string | null;
  /**
   * The choices of a `select` item, or of a `ref` item (rows of its entity: the value sent, the
   * label shown); null for other items.
   */
  options: FormOption[] | null;
  /** The search box of a `ref` item over a large entity, or null. */
  search: FormSearch | null;
  /** What a `ref` item says about its choices (none may be read, no match, more matches), or null. */
  notice: string | null;
  /** The rules of the value, shown beside the field: from the column a form writes, or the workflow's input. */
  rules: FormRules;
}

/** One choice of a `select` or `ref` form item. */
export interface FormOption {
  /** The value sent. */
  value: string;
  /** The text shown. */
  label: string;
}

/**
 * The search box of a `ref` item whose entity has too many rows for one select: a GET of the same
 * screen with `param` set, which lists the rows whose label contains `query` as the choices.
 */
export interface FormSearch {
  /** The query parameter the search text is sent as: `<form>_<item property>_q`. */
  param: string;
  /** The search text the screen was resolved with ("" when none). */
  query: string;
}

/** Rules of a form item's value that the form shows (and the server checks). */
export interface FormRules {
  /** Fewest characters, or null. */
  minLength: number | null;
  /** Most characters, or null. */
  maxLength: number | null;
  /** A regular expression the text must match somewhere, or null. */
  pattern: string | null;
  /** `email` or `url` when the text must be one, else null. */
  format: 'email' | 'url' | null;
  /** The messages of the entity's checks on this item's column alone. */
  checks: string[];
}

/** A `datagrid` component: one page of its entity. */
export interface ResolvedDatagrid {
  /** The component type. */
  type: 'datagrid';
  /** Component name; its page is read from the query parameter `<name>_page`. */
  name: string;
  /** The entity shown. */
  entity: string;
  /** Columns of the entity. */
  columns: Column[];
  /** The rows of this page, each an array of cells in column order. */
  rows: unknown[][];
  /** The page shown, starting at 1. */
  page: number;
  /** Rows per page. */
  pageSize: number;
  /** Whether there is a page before this one. */
  hasPrevious: boolean;
  /** Whether there is a page after this one. */
  hasNext: boolean;
  /** App-relative address of the previous page (`/screens/...`), or null. */
  previousHref: string | null;
  /** App-relative address of the next page (`/screens/...`), or null. */
  nextHref: string | null;
  /** Why the entity could not be read, or null. */
  error: string | null;
  /** The header of each column, in column order: its `label`, else its name. */
  labels: string[];
  /** Each cell of {@link ResolvedDatagrid.rows} as shown: printed with its column's `format`; empty for no value. */
  cells: string[][];
  /** Where each row leads (its `row_action`, app-relative, values URL-encoded), or null. */
  rowHrefs: (string | null)[];
  /** The column whose cell holds each row's link: the first key column shown, else the first column. */
  linkColumn: number;
  /** How many rows the view has (its search applied), or null when they could not be counted. */
  total: number | null;
  /** The search box of a `searchable` grid, or null. */
  search: GridSearch | null;
  /** The column the rows are sorted by (its index) and the direction, or null. */
  sort: { column: number; direction: 'ascending' | 'descending' } | null;
  /** For each column of a `sortable` grid, the app-relative address that sorts by it; null otherwise. */
  sortHrefs: (string | null)[];
  /** App-relative address of the CSV of the view, when the grid has `export`; else null. */
  exportHref: string | null;
  /** What the grid says when it has no rows: its `empty_text`, or a default. */
  emptyText: string;
}

/** The search box of a grid: a GET form that keeps the screen's other query parameters. */
export interface GridSearch {
  /** The query parameter of the search (`<grid>_q`). */
  param: string;
  /** The text searched for, as typed (empty when none). */
  value: string;
  /** The other query parameters of the screen, sent again with the search (the page left out). */
  keep: [string, string][];
  /** The headers of the columns searched. */
  columns: string[];
  /** App-relative address of the screen without this search (to clear it). */
  clearHref: string;
}

/** A `button` component: a link to another screen. */
export interface ResolvedButton {
  /** The component type. */
  type: 'button';
  /** Component name. */
  name: string;
  /** The text of the button. */
  label: string;
  /** App-relative address it leads to (`/screens/<url>?...`), values URL-encoded. */
  href: string;
}

/** The result of `AppRuntime.submit`: the redirect, or the screen re-rendered with the errors. */
export type SubmitResult =
  | {
      ok: true;
      /** App-relative address to go to next (`/screens/<url>?...`), values URL-encoded. */
      redirect: string;
      /** The run the form started; null for a form that writes a row. */
      run: RunRecord | null;
      /**
       * What `{{output.x}}` of the redirect took its values from: the workflow's output, or for a
       * form that writes a row, the row's values and `written`.
       */
      output: unknown;
    }
  | {
      ok: false;
      /**
       * Why: `invalid` (a value is wrong or the row conflicts, nothing ran or was written), `failed`
       * (the workflow or the write failed), `redirect`
       * (the workflow succeeded but the redirect could not be built, e.g. an output is missing).
       */
      reason: 'invalid' | 'failed' | 'redirect';
      /** The screen re-rendered with the submitted values and the errors on the form and its items. */
      screen: ResolvedScreen;
      /**
       * Every problem; `path` is the item's input property as a path (`amount`, `["No. of items"]`),
       * or `""` for the whole form.
       */
      errors: Issue[];
      /** The run, when one was started. */
      run: RunRecord | null;
    };

/** One point of a chart: its label (the group), its value and the value as shown. */
export interface ChartPoint {
  /** The group's value in the `x` column, as text. */
  label: string;
  /** The aggregate (`y`), or null when it has none (e.g. a sum of no cells). */
  value: number | null;
  /** The value printed with the chart's `format`; empty for no value. */
  text: string;
}

/** A `chart` component: the points of its aggregate read. */
export interface ResolvedChart {
  /** The component type. */
  type: 'chart';
  /** Component name. */
  name: string;
  /** `bar`, `line` or `pie`. */
  kind: 'bar' | 'line' | 'pie';
  /** The chart's title: its `title`, else its entity's name. */
  title: string;
  /** The entity read. */
  entity: string;
  /** Header of the labels (`x`). */
  xLabel: string;
  /** Header of the values (`y`). */
  yLabel: string;
  /** The points, in the read's order. */
  points: ChartPoint[];
  /** Whether the read had more groups than a chart shows (the first ones are shown). */
  truncated: boolean;
  /** Why the chart could not be read, or null. */
  error: string | null;
}

/** A `metric` component: one number with its label. */
export interface ResolvedMetric {
  /** The component type. */
  type: 'metric';
  /** Component name. */
  name: string;
  /** The label shown with the number. */
  label: string;
  /** The value read (the `value` column of the first row), or null. */
  value: unknown;
  /** The value printed with the metric's `format`; empty for no value. */
  text: string;
  /** Why the metric could not be read, or null. */
  error: string | null;
}
