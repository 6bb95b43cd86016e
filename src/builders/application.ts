import {
  ApplicationSchema,
  parse,
  type Application,
  type Component,
  type FormItem,
  type Operation,
  type WriteJob,
} from '../schema/index.js';
import type { EntityRef } from './relationship.js';

/** A redirect url: `/screens/<screen_url>`, optionally with a query string holding `{{output.x}}` or `{{query_params.x}}`. */
export type ScreenRedirect = `/screens/${string}`;

/** A component before it is placed: its name is optional and filled in by the row (`text_1`, `form_1`...). */
export type ComponentDef = Component extends infer C
  ? C extends { name: string }
    ? Omit<C, 'name'> & { name?: string }
    : never
  : never;

/**
 * A `text` component: a heading or a paragraph.
 * @example
 * ```ts
 * text('Orders', { type: 'heading' })
 * ```
 */
export function text(contents: string, options: { name?: string; type?: string } = {}): ComponentDef {
  const body = options.type === undefined ? { contents } : { contents, type: options.type };
  return withName({ type: 'text', formatting: {}, text: body }, options.name);
}

/** Options of {@link form}. */
export interface FormOptions {
  /** Component name, used in the form's submit address. */
  name?: string;
  /** The fields; each fills the workflow input property (or the column) named by its `name`, else its `label`. */
  items: FormItem[];
  /** Name of the workflow started (synchronously) on submit; or give `write`. */
  workflow?: string;
  /**
   * Instead of a workflow: the row the form writes, e.g.
   * `{ entity_name: 'customers', write_mode: 'update', key: { id: '{{query_params.id}}' } }`.
   * With `key`, the form shows the row its screen's address names and writes back to it.
   */
  write?: Omit<WriteJob, 'type'>;
  /** Where to go after the workflow succeeds; may use `{{output.<field>}}`. */
  redirect?: ScreenRedirect;
}

/**
 * A `form` component: its items start the named workflow (or write one row), then redirect.
 * @example
 * ```ts
 * form({ items: [{ label: 'amount', type: 'number', required: true }], workflow: 'create_order', redirect: '/screens/order?id={{output.id}}' })
 * form({ items: [{ label: 'City', name: 'city', type: 'text' }], write: { entity_name: 'customers', write_mode: 'update', key: { id: '{{query_params.id}}' } } })
 * ```
 */
export function form(options: FormOptions): ComponentDef {
  if ((options.workflow === undefined) === (options.write === undefined))
    throw new TypeError('form needs either workflow (a workflow to run) or write (a row to write)');
  const body: Extract<Component, { type: 'form' }>['form'] = {
    form_items: options.items.map((item) => ({ ...item })),
    job:
      options.write === undefined
        ? { type: 'sync', workflow_name: options.workflow! }
        : { type: 'write', ...options.write },
  };
  if (options.redirect !== undefined)
    body.do = { type: 'redirect', redirect_data: { url: options.redirect } };
  return withName({ type: 'form', formatting: {}, form: body }, options.name);
}

/**
 * A `datagrid` component: shows an entity page by page; `operation` filters and orders its rows,
 * and its filter values may be `{{query_params.x}}`.
 * @example
 * ```ts
 * datagrid('orders', { page_size: 20, operation: { filters: [{ column: 'customer_id', operator: 'EQUALS', value_type: 'NUMBER', value: '{{query_params.customer}}' }] } })
 * ```
 */
export function datagrid(
  entity: EntityRef,
  options: { name?: string; page_size?: number; operation?: Operation } = {},
): ComponentDef {
  const body: Extract<Component, { type: 'datagrid' }>['datagrid'] = {
    entity_name: typeof entity === 'string' ? entity : entity.name,
  };
  if (options.page_size !== undefined) body.page_size = options.page_size;
  if (options.operation !== undefined) body.operation = options.operation;
  return withName({ type: 'datagrid', formatting: {}, datagrid: body }, options.name);
}

/**
 * A `button` component that redirects to a screen.
 * @example
 * ```ts
 * button('Back', '/screens/home')
 * ```
 */
export function button(
  label: string,
  redirect: ScreenRedirect,
  options: { name?: string } = {},
): ComponentDef {
  return withName(
    {
      type: 'button',
      formatting: {},
      button: { label, event: { type: 'redirect', redirect_data: { url: redirect } } },
    },
    options.name,
  );
}

function withName<C extends ComponentDef>(component: C, name: string | undefined): C {
  return name === undefined ? component : { name, ...component };
}

/** Lays out one screen: rows of components. */
export class ScreenBuilder {
  readonly #rows: Component[][] = [];
  readonly #counts = new Map<string, number>();

  /** @internal Given by {@link ApplicationBuilder.screen}. */
  constructor() {}

  /** Adds a row of components, left to right; unnamed components are named `<type>_<n>` in screen order. */
  row(...components: ComponentDef[]): this {
    this.#rows.push(components.map((c) => this.#named(c)));
    return this;
  }

  /** @internal */
  rows(): Component[][] {
    return this.#rows;
  }

  #named(component: ComponentDef): Component {
    const count = (this.#counts.get(component.type) ?? 0) + 1;
    this.#counts.set(component.type, count);
    return { ...component, name: component.name ?? `${component.type}_${count}` } as Component;
  }
}

/**
 * Builds an application configuration (its screens and their components); the type remembers the
 * screen urls for {@link ApplicationBuilder.start}.
 */
export class ApplicationBuilder<Screens extends string = never> {
  readonly #screens: ReadonlyArray<{ url: string; components: Component[][] }>;
  readonly #start: string | undefined;

  /** @internal Use {@link application}. */
  constructor(screens: ReadonlyArray<{ url: string; components: Component[][] }>, start: string | undefined) {
    this.#screens = screens;
    this.#start = start;
  }

  /** Adds a screen addressed as `/screens/<url>`; `layout` adds its rows. */
  screen<const U extends string>(
    url: U,
    layout: (screen: ScreenBuilder) => ScreenBuilder,
  ): ApplicationBuilder<Screens | U> {
    const components = layout(new ScreenBuilder()).rows();
    return new ApplicationBuilder([...this.#screens, { url, components }], this.#start);
  }

  /** Sets the screen shown first: one of the declared screen urls. */
  start(url: Screens): ApplicationBuilder<Screens> {
    return new ApplicationBuilder(this.#screens, url);
  }

  /**
   * Returns the plain application configuration, validated.
   * @throws ValidationError listing every problem (for example a redirect to no screen of this app).
   */
  build(): Application & { start_screen_url: Screens } {
    const screens = this.#screens.map((s) => ({ url: s.url, components: s.components }));
    const body: Record<string, unknown> = { screens };
    if (this.#start !== undefined) body['start_screen_url'] = this.#start;
    return parse(ApplicationSchema, body, 'application') as Application & { start_screen_url: Screens };
  }
}

/**
 * Starts an application configuration: screens of components, and the screen it starts on.
 * @example
 * ```ts
 * const app = application()
 *   .screen('home', (s) => s.row(text('Orders', { type: 'heading' }), button('New', '/screens/new')).row(datagrid('orders')))
 *   .screen('new', (s) => s.row(form({ items: [{ label: 'amount', type: 'number' }], workflow: 'create_order', redirect: '/screens/home' })))
 *   .start('home')
 *   .build();
 * ```
 */
export function application(): ApplicationBuilder {
  return new ApplicationBuilder([], undefined);
}
