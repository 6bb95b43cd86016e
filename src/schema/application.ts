import { z } from 'zod';
import { addIssue } from './issues.js';
import { NameSchema } from './entity.js';
import { OperationSchema } from './get-entity.js';
import { DEFAULT_GRID_ROWS, MAX_SCREEN_GRID_ROWS } from './grid-rows.js';
import { ValueFormatSchema } from './actions.js';

/**
 * Form item types: the kind of value a form field takes. `ref` picks a row of another entity,
 * `select` one of fixed `options`, `textarea` is text on several lines, `checkbox` a yes/no box
 * (as `boolean`).
 */
export const FORM_ITEM_TYPES = [
  'number',
  'text',
  'string',
  'boolean',
  'date',
  'ref',
  'select',
  'textarea',
  'checkbox',
] as const;

/** Component types of a screen. */
export const COMPONENT_TYPES = ['text', 'form', 'datagrid', 'button', 'chart', 'metric'] as const;

/** Chart kinds: drawn as server-side SVG with a text table beside it. */
export const CHART_KINDS = ['bar', 'line', 'pie'] as const;

/** Most options of a `select` form item, and most items of an application's menu. */
export const MAX_OPTIONS = 200;

const SCREEN_URL = /^[A-Za-z0-9._~-]+$/;

/** A redirect: `url` is `/screens/<screen_url>` with an optional query string holding `{{output.x}}` or `{{query_params.x}}`. */
export const RedirectSchema = z.object({
  type: z.literal('redirect'),
  redirect_data: z.object({ url: z.string().min(1) }),
});

/**
 * What a `ref` form item picks: a row of `entity`, shown by its `label_column`, filling the item
 * with its `value_column`. A small entity is a select; a large one a server-side search box.
 */
export const RefConfigSchema = z.strictObject({
  entity: z.string().min(1),
  label_column: z.string().min(1),
  value_column: z.string().min(1),
});

/** One option of a `select` form item: the value sent, and the text shown (the value when absent). */
export const SelectOptionSchema = z.strictObject({
  value: z.string(),
  label: z.string().min(1).optional(),
});

/**
 * A form item: fills the workflow input property named by `name`, else by `label`. `ref` items
 * need `ref`, `select` items need `options`; `help` is a line shown under the field.
 */
export const FormItemSchema = z
  .object({
    label: z.string().min(1),
    name: z.string().min(1).optional(),
    type: z.enum(FORM_ITEM_TYPES),
    required: z.boolean().optional(),
    help: z.string().optional(),
    number_config: z
      .object({
        min: z.number().optional(),
        max: z.number().optional(),
        step: z.number().positive().optional(),
      })
      .optional(),
    ref: RefConfigSchema.optional(),
    options: z.array(SelectOptionSchema).min(1).max(MAX_OPTIONS).optional(),
  })
  .superRefine((item, ctx) => {
    if (item.type === 'ref' && !item.ref)
      addIssue(
        ctx,
        ['ref'],
        `form item "${item.label}" is of type ref and needs ref: { entity, label_column, value_column }`,
        'missing_ref',
      );
    if (item.type !== 'ref' && item.ref)
      addIssue(
        ctx,
        ['ref'],
        `form item "${item.label}" has ref, which only a ref item takes`,
        'unexpected_ref',
      );
    if (item.type === 'select' && !item.options)
      addIssue(
        ctx,
        ['options'],
        `form item "${item.label}" is of type select and needs options: [{ value, label? }]`,
        'missing_options',
      );
    if (item.type !== 'select' && item.options)
      addIssue(
        ctx,
        ['options'],
        `form item "${item.label}" has options, which only a select item takes`,
        'unexpected_options',
      );
    if (item.options) {
      const seen = new Set<string>();
      item.options.forEach((option, o) => {
        if (seen.has(option.value))
          addIssue(
            ctx,
            ['options', o, 'value'],
            `option value "${option.value}" is used more than once`,
            'duplicate_option',
          );
        seen.add(option.value);
      });
    }
  });

const base = {
  name: NameSchema,
  formatting: z.record(z.string(), z.unknown()).optional(),
};

/** A `text` component: a heading or a paragraph. */
export const TextComponentSchema = z.object({
  ...base,
  type: z.literal('text'),
  text: z.object({ contents: z.string(), type: z.string().optional() }),
});

/** Write modes a form's `write` job may use. */
export const FORM_WRITE_MODES = ['append', 'upsert', 'update', 'delete'] as const;

/** A form job that runs a workflow synchronously; the items fill its input. */
export const SyncJobSchema = z.object({ type: z.literal('sync'), workflow_name: z.string().min(1) });

/**
 * A form job that writes one row of an entity: the items fill its columns. With `key` (each
 * primary-key column to a value such as `{{query_params.id}}`), the form edits the row the screen's
 * address names: it shows that row's values, and writes back to it.
 */
export const WriteJobSchema = z.object({
  type: z.literal('write'),
  entity_name: z.string().min(1),
  write_mode: z.enum(FORM_WRITE_MODES),
  key: z.record(z.string(), z.string()).optional(),
});

/** A `form` component: its items, its job (a workflow to run, or a row to write), and where it goes after. */
export const FormComponentSchema = z.object({
  ...base,
  type: z.literal('form'),
  form: z.object({
    form_items: z.array(FormItemSchema),
    job: z.discriminatedUnion('type', [SyncJobSchema, WriteJobSchema]),
    do: RedirectSchema.optional(),
  }),
});

/**
 * One column a grid shows: the entity's `column`, under `label` (the column's name when absent),
 * printed with `format` (`Intl` options plus `locale`: money, percentages, dates).
 */
export const GridColumnSchema = z.strictObject({
  column: z.string().min(1),
  label: z.string().min(1).optional(),
  format: ValueFormatSchema.optional(),
});

/**
 * A `datagrid` component: shows an entity, page by page; `operation` (as the entity read takes
 * it) selects, filters and orders its rows, and filter values may be `{{query_params.x}}`.
 * `columns` picks, names and formats the columns shown; `row_action` makes each row a link (its url
 * may use `{{row.<column>}}`); `searchable` adds a search box, `sortable` sort links on the headers,
 * `export` a CSV download of the view; `empty_text` is what an empty grid says.
 */
export const DatagridComponentSchema = z.object({
  ...base,
  type: z.literal('datagrid'),
  datagrid: z.object({
    entity_name: z.string().min(1),
    page_size: z.number().int().min(1).max(1000).optional(),
    operation: OperationSchema.optional(),
    columns: z.array(GridColumnSchema).min(1).max(100).optional(),
    row_action: RedirectSchema.optional(),
    searchable: z.boolean().optional(),
    sortable: z.boolean().optional(),
    export: z.boolean().optional(),
    empty_text: z.string().min(1).optional(),
  }),
});

/**
 * A `chart` component: an aggregate read of `entity_name` (its `operation` with `group_by` and
 * `aggregates`) drawn as a `bar`, `line` or `pie` chart: `x` names the column of the labels (a
 * group column), `y` the column of the values (an aggregate's alias); `format` prints the values.
 */
export const ChartComponentSchema = z.object({
  ...base,
  type: z.literal('chart'),
  chart: z.strictObject({
    kind: z.enum(CHART_KINDS),
    title: z.string().min(1).optional(),
    entity_name: z.string().min(1),
    operation: OperationSchema,
    x: z.string().min(1),
    y: z.string().min(1),
    format: ValueFormatSchema.optional(),
  }),
});

/**
 * A `metric` component: one number with its label, the `value` column (an aggregate's alias) of
 * the first row of an aggregate read of `entity_name`, printed with `format`.
 */
export const MetricComponentSchema = z.object({
  ...base,
  type: z.literal('metric'),
  metric: z.strictObject({
    label: z.string().min(1),
    entity_name: z.string().min(1),
    operation: OperationSchema,
    value: z.string().min(1),
    format: ValueFormatSchema.optional(),
  }),
});

/** A `button` component: redirects to a screen. */
export const ButtonComponentSchema = z.object({
  ...base,
  type: z.literal('button'),
  button: z.object({ label: z.string().min(1), event: RedirectSchema }),
});

/** A component of a screen. */
export const ComponentSchema = z.discriminatedUnion('type', [
  TextComponentSchema,
  FormComponentSchema,
  DatagridComponentSchema,
  ButtonComponentSchema,
  ChartComponentSchema,
  MetricComponentSchema,
]);

/** One entry of an application's menu: its text, and the screen it opens (`/screens/<url>?...`). */
export const MenuItemSchema = z.strictObject({
  label: z.string().min(1),
  url: z.string().min(1),
});

/** The hidden field of a form's one-time submission token; no item may fill it. */
export const SUBMISSION_FIELD = '_submission';

/** A screen: its url segment and rows of components. */
export const ScreenSchema = z.object({
  url: z
    .string()
    .regex(SCREEN_URL, 'screen url must be one path segment of letters, digits, ".", "_", "~" or "-"')
    .refine((url) => url !== '.' && url !== '..', { message: 'screen url may not be "." or ".."' }),
  components: z.array(z.array(ComponentSchema)),
});

/** Parses a redirect url into its screen and query; `undefined` when it does not address a screen. */
export function parseRedirectUrl(url: string): { screen: string; query: string } | undefined {
  const match = /^\/screens\/([^/?#]+)(?:\?([^#]*))?$/.exec(url.trim());
  if (!match) return undefined;
  return { screen: match[1]!, query: match[2] ?? '' };
}

/** An application configuration: its screens, each a grid of components, and the screen it starts on. */
export const ApplicationSchema = z
  .object({
    screens: z.array(ScreenSchema).min(1),
    start_screen_url: z.string().min(1),
    menu: z.array(MenuItemSchema).max(MAX_OPTIONS).optional(),
  })
  .superRefine((app, ctx) => {
    const urls = new Set<string>();
    app.screens.forEach((screen, s) => {
      if (urls.has(screen.url))
        addIssue(
          ctx,
          ['screens', s, 'url'],
          `screen url "${screen.url}" is used more than once`,
          'duplicate_screen',
        );
      urls.add(screen.url);
    });
    if (!urls.has(app.start_screen_url)) {
      addIssue(
        ctx,
        ['start_screen_url'],
        `start_screen_url "${app.start_screen_url}" names no screen (screens: ${[...urls].join(', ')})`,
        'unknown_screen',
      );
    }
    app.menu?.forEach((item, m) => {
      const target = parseRedirectUrl(item.url);
      if (!target || /\{\{/.test(item.url))
        addIssue(
          ctx,
          ['menu', m, 'url'],
          `menu url "${item.url}" must be /screens/<screen_url> with an optional query string, and no placeholders`,
          'invalid_redirect',
        );
      else if (!urls.has(target.screen))
        addIssue(
          ctx,
          ['menu', m, 'url'],
          `menu url "${item.url}" names no screen of this application`,
          'unknown_screen',
        );
    });
    app.screens.forEach((screen, s) => {
      // Each view of a screen reads every grid's page: bounded, so one stored config cannot make
      // every view hold the engine (2,000 grids of 1,000 rows took 21 s a view).
      let rows = 0;
      for (const row of screen.components)
        for (const component of row)
          if (component.type === 'datagrid') rows += component.datagrid.page_size ?? DEFAULT_GRID_ROWS;
      if (rows > MAX_SCREEN_GRID_ROWS)
        addIssue(
          ctx,
          ['screens', s, 'components'],
          `the datagrids of screen "${screen.url}" show ${rows} rows a view (their page_size, 20 when not given); at most ${MAX_SCREEN_GRID_ROWS} are allowed`,
          'too_big',
        );
      const names = new Set<string>();
      screen.components.forEach((row, r) =>
        row.forEach((component, c) => {
          const path = ['screens', s, 'components', r, c];
          if (names.has(component.name))
            addIssue(
              ctx,
              [...path, 'name'],
              `component name "${component.name}" is used more than once on screen "${screen.url}"`,
              'duplicate_component',
            );
          names.add(component.name);
          // A component's name is a segment of its address (a form posts to .../forms/<name>).
          if (component.name === '.' || component.name === '..')
            addIssue(
              ctx,
              [...path, 'name'],
              `component name "${component.name}" cannot be a segment of the form's address`,
              'invalid_name',
            );
          if (component.type === 'form')
            component.form.form_items.forEach((item, i) => {
              if ((item.name ?? item.label) === SUBMISSION_FIELD)
                addIssue(
                  ctx,
                  [...path, 'form', 'form_items', i, item.name === undefined ? 'label' : 'name'],
                  `"${SUBMISSION_FIELD}" is the field of the form's submission token; name the item otherwise`,
                  'reserved_name',
                );
            });
          for (const { at, value } of screenValues(component))
            for (const match of value.matchAll(/\{\{([^{}]*)\}\}/g))
              if (!/^query_params\.[^.[\]{}\s]+$/.test(match[1]!.trim()))
                addIssue(
                  ctx,
                  [...path, ...at],
                  `{{${match[1]!.trim()}}} is not allowed here; only {{query_params.<name>}}`,
                  'invalid_placeholder',
                );
          if (component.type === 'chart' || component.type === 'metric')
            aggregateIssues(component, path, ctx);
          const redirect =
            component.type === 'button'
              ? { at: ['button', 'event'], url: component.button.event.redirect_data.url }
              : component.type === 'form' && component.form.do
                ? { at: ['form', 'do'], url: component.form.do.redirect_data.url }
                : component.type === 'datagrid' && component.datagrid.row_action
                  ? { at: ['datagrid', 'row_action'], url: component.datagrid.row_action.redirect_data.url }
                  : undefined;
          if (redirect) {
            const target = parseRedirectUrl(redirect.url);
            const where = [...path, ...redirect.at, 'redirect_data', 'url'];
            const fromRow = component.type === 'datagrid';
            for (const match of redirect.url.matchAll(/\{\{([^{}]*)\}\}/g)) {
              const expression = match[1]!.trim();
              const root = /^(output|query_params|row)\.[^.[\]{}\s]+$/.exec(expression)?.[1];
              if (!root || ((root === 'row') !== fromRow && root !== 'query_params')) {
                addIssue(
                  ctx,
                  where,
                  fromRow
                    ? `row_action url uses {{${expression}}}; only {{row.<column>}} and {{query_params.<name>}} are allowed`
                    : `redirect url uses {{${expression}}}; only {{output.<field>}} and {{query_params.<name>}} are allowed`,
                  'invalid_redirect',
                );
              } else if (root === 'output' && component.type === 'button') {
                addIssue(
                  ctx,
                  where,
                  `button "${component.name}" runs no workflow, so its redirect cannot use {{${expression}}}`,
                  'invalid_redirect',
                );
              }
            }
            if (!target)
              addIssue(
                ctx,
                where,
                `redirect url "${redirect.url}" must be /screens/<screen_url> with an optional query string`,
                'invalid_redirect',
              );
            else if (!urls.has(target.screen))
              addIssue(
                ctx,
                where,
                `redirect url "${redirect.url}" names no screen of this application`,
                'unknown_screen',
              );
          }
        }),
      );
    });
  });

/**
 * Problems of a chart or metric that its config alone shows: it reads aggregates, `x` is a group
 * column and `y` (a metric's `value`) an aggregate's alias.
 */
function aggregateIssues(
  component: Extract<z.infer<typeof ComponentSchema>, { type: 'chart' | 'metric' }>,
  path: (string | number)[],
  ctx: z.RefinementCtx,
): void {
  const operation = component.type === 'chart' ? component.chart.operation : component.metric.operation;
  const at = [...path, component.type];
  const aliases = (operation.aggregates ?? []).map((a) => a.alias);
  const groups = operation.group_by ?? [];
  if (aliases.length === 0)
    addIssue(
      ctx,
      [...at, 'operation', 'aggregates'],
      `${component.type} "${component.name}" shows aggregates, so its operation needs aggregates: [{ function, column?, alias }]`,
      'missing_aggregates',
    );
  const value = component.type === 'chart' ? component.chart.y : component.metric.value;
  if (aliases.length > 0 && !aliases.includes(value))
    addIssue(
      ctx,
      [...at, component.type === 'chart' ? 'y' : 'value'],
      `${component.type} "${component.name}" shows "${value}", which is not an alias of its aggregates (${aliases.join(', ')})`,
      'unknown_column',
    );
  if (component.type === 'chart' && !groups.includes(component.chart.x))
    addIssue(
      ctx,
      [...at, 'x'],
      `chart "${component.name}" labels its ${component.chart.kind === 'pie' ? 'slices' : 'points'} with "${component.chart.x}", which is not a column of its group_by (${groups.join(', ') || 'none'})`,
      'unknown_column',
    );
}

/** Values of a component that may hold `{{query_params.x}}`: a write job's key, a grid's filter values. */
function screenValues(
  component: z.infer<typeof ComponentSchema>,
): { at: (string | number)[]; value: string }[] {
  if (component.type === 'form' && component.form.job.type === 'write')
    return Object.entries(component.form.job.key ?? {}).map(([column, value]) => ({
      at: ['form', 'job', 'key', column],
      value,
    }));
  if (component.type === 'datagrid')
    return (component.datagrid.operation?.filters ?? []).flatMap((filter, f) =>
      [filter.value].flat().flatMap((value, v) =>
        typeof value === 'string'
          ? [
              {
                at: [
                  'datagrid',
                  'operation',
                  'filters',
                  f,
                  'value',
                  ...(Array.isArray(filter.value) ? [v] : []),
                ],
                value,
              },
            ]
          : [],
      ),
    );
  return [];
}

/** An application configuration. */
export type Application = z.infer<typeof ApplicationSchema>;
/** An application configuration as written: what `engine.applications.put` takes. */
export type ApplicationBody = z.input<typeof ApplicationSchema>;
/** A screen. */
export type Screen = z.infer<typeof ScreenSchema>;
/** A component. */
export type Component = z.infer<typeof ComponentSchema>;
/** A form item. */
export type FormItem = z.infer<typeof FormItemSchema>;
/** A grid's column: what it shows, under which label, in which format. */
export type GridColumn = z.infer<typeof GridColumnSchema>;
/** One entry of an application's menu. */
export type MenuItem = z.infer<typeof MenuItemSchema>;
/** A form's `write` job. */
export type WriteJob = z.infer<typeof WriteJobSchema>;
