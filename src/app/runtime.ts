import { NotFoundError, ValidationError, isStepwireError, type Issue } from '../errors/index.js';
import type { AppHost } from './host.js';
import type { RunRecord } from '../schema/index.js';
import type { Application, Component, Screen } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { itemProperty } from './form.js';
import { assignIssues, coerceForm } from './form.js';
import { fillQueryParams, isScreenName, resolveRedirect } from './redirect.js';
import type {
  ResolvedComponent,
  ResolvedDatagrid,
  ResolvedForm,
  ResolvedScreen,
  ScreenQuery,
  SubmitResult,
} from './types.js';

/** Rows per grid page when the config gives no `page_size`. */
const DEFAULT_GRID_PAGE_SIZE = 20;
/** Highest grid page number read from a query string; beyond it the grid is simply empty. */
const MAX_GRID_PAGE = 1_000_000;

/** What a re-rendered form shows: the submitted values and the errors. */
interface FormState {
  component: string;
  values: Readonly<Record<string, string>>;
  itemErrors: ReadonlyMap<string, string>;
  formError: string | null;
}

/**
 * The runtime of one application: resolves screens with their data, submits forms (running their
 * workflow) and computes redirects. Get one with `engine.applications.open(name)`.
 * @example
 * ```ts
 * const app = await engine.applications.open('shop');
 * const screen = await app.screen('start');
 * const result = await app.submit('start', 'lookup', { customer_id: '7' });
 * if (result.ok) console.log(result.redirect); // "/screens/orders?customer=7"
 * ```
 */
export class AppRuntime {
  /** The application's name. */
  readonly name: string;
  /** The application's config. */
  readonly application: Application;
  #host: AppHost;
  #screens: ReadonlySet<string>;

  constructor(host: AppHost, name: string, application: Application) {
    this.#host = host;
    this.name = name;
    this.application = application;
    this.#screens = new Set(application.screens.map((s) => s.url).filter(isScreenName));
  }

  /**
   * A screen with its components' data: texts with `{{query_params.x}}` filled in, form items,
   * one page of each grid (page from the query parameter `<grid name>_page`), button addresses.
   * @throws {@link NotFoundError} when the app has no such screen.
   */
  async screen(url: string, query?: ScreenQuery | URLSearchParams): Promise<ResolvedScreen> {
    return this.#resolve(this.#find(url), toQuery(query), undefined);
  }

  /**
   * Submits a form: coerces the values by item type, runs the form's workflow (bounded by
   * `limits.formRunTimeoutMs`) and computes the redirect. On any problem the screen comes back
   * re-rendered with the values and the errors attached to the form and its items. `traceparent`,
   * the W3C trace context of the request that submitted the form, becomes the run span's parent.
   * @throws {@link NotFoundError} when there is no such screen or form.
   */
  async submit(
    url: string,
    component: string,
    values: Readonly<Record<string, string>>,
    query?: ScreenQuery | URLSearchParams,
    options: { traceparent?: string | undefined } = {},
  ): Promise<SubmitResult> {
    const screen = this.#find(url);
    const form = findComponent(screen, component);
    if (form?.type !== 'form') throw new NotFoundError('form', `${url}/${component}`);
    const params = toQuery(query);
    const items = form.form.form_items;
    const failure = async (
      reason: 'invalid' | 'failed' | 'redirect',
      errors: Issue[],
      run: RunRecord | null,
    ): Promise<SubmitResult> => {
      // A person using the screen sees a plain sentence; the details stay in `errors`, the run record and the API.
      const { byItem, form: formLevel } =
        reason === 'invalid'
          ? assignIssues(items, errors)
          : { byItem: new Map<string, string>(), form: [plainFailure(run)] };
      const state: FormState = {
        component,
        values,
        itemErrors: byItem,
        formError: formLevel.length > 0 ? formLevel.join(' ') : null,
      };
      return { ok: false, reason, screen: await this.#resolve(screen, params, state), errors, run };
    };

    const coerced = coerceForm(items, values);
    if (coerced.issues.length > 0) return failure('invalid', coerced.issues, null);
    let run: RunRecord;
    try {
      run = await this.#host.run(form.form.job.workflow_name, coerced.input, {
        timeoutMs: this.#host.options.limits.formRunTimeoutMs,
        traceparent: options.traceparent,
      });
    } catch (error) {
      if (error instanceof ValidationError) return failure('invalid', error.issues, null);
      if (isStepwireError(error))
        return failure('failed', [{ code: error.code, path: '', message: error.message }], null);
      throw error;
    }
    if (run.status !== 'succeeded') {
      const message = run.error?.message ?? `the workflow ended ${run.status}`;
      return failure('failed', [{ code: run.error?.code ?? run.status, path: '', message }], run);
    }
    const template = form.form.do?.redirect_data.url ?? `/screens/${screen.url}`;
    try {
      const redirect = form.form.do
        ? resolveRedirect(template, this.#screens, { output: run.output, query: params })
        : sameScreen(screen.url, params);
      return { ok: true, redirect, run };
    } catch (error) {
      if (!isStepwireError(error)) throw error;
      return failure('redirect', [{ code: error.code, path: '', message: error.message }], run);
    }
  }

  /**
   * The app-relative address a button leads to, with `{{query_params.x}}` filled in (URL-encoded).
   * @throws {@link NotFoundError} when there is no such screen or button.
   */
  async button(url: string, component: string, query?: ScreenQuery | URLSearchParams): Promise<string> {
    const found = findComponent(this.#find(url), component);
    if (found?.type !== 'button') throw new NotFoundError('button', `${url}/${component}`);
    return resolveRedirect(found.button.event.redirect_data.url, this.#screens, { query: toQuery(query) });
  }

  #find(url: string): Screen {
    const screen = this.#screens.has(url) ? this.application.screens.find((s) => s.url === url) : undefined;
    if (!screen) throw new NotFoundError('screen', `${this.name}/${url}`);
    return screen;
  }

  async #resolve(screen: Screen, query: ScreenQuery, state: FormState | undefined): Promise<ResolvedScreen> {
    const rows = await Promise.all(
      screen.components.map((row) => Promise.all(row.map((c) => this.#component(screen, c, query, state)))),
    );
    return { app: this.name, url: screen.url, startUrl: this.application.start_screen_url, query, rows };
  }

  async #component(
    screen: Screen,
    component: Component,
    query: ScreenQuery,
    state: FormState | undefined,
  ): Promise<ResolvedComponent> {
    switch (component.type) {
      case 'text':
        return {
          type: 'text',
          name: component.name,
          heading: component.text.type === 'heading',
          contents: fillQueryParams(component.text.contents, query),
        };
      case 'button':
        return {
          type: 'button',
          name: component.name,
          label: fillQueryParams(component.button.label, query),
          href: resolveRedirect(component.button.event.redirect_data.url, this.#screens, { query }),
        };
      case 'form':
        return resolveForm(component, state?.component === component.name ? state : undefined);
      case 'datagrid':
        return this.#grid(screen, component, query);
    }
  }

  async #grid(
    screen: Screen,
    component: Extract<Component, { type: 'datagrid' }>,
    query: ScreenQuery,
  ): Promise<ResolvedDatagrid> {
    const limits = this.#host.options.limits;
    const pageSize = Math.min(component.datagrid.page_size ?? DEFAULT_GRID_PAGE_SIZE, limits.maxPageSize);
    const pageKey = `${component.name}_page`;
    const asked =
      Object.hasOwn(query, pageKey) && /^\d{1,7}$/.test(query[pageKey]!) ? Number(query[pageKey]) : 1;
    const page = Math.min(Math.max(asked, 1), MAX_GRID_PAGE);
    const entity = component.datagrid.entity_name;
    const read = await this.#host.catalog.getEntity({
      entity_name: entity,
      operation: {},
      page_size: pageSize,
      page_number: page,
    });
    const error = read.body.error?.is_error
      ? (read.body.error.errors ?? ['the entity could not be read']).join('; ')
      : null;
    const rows = read.body.table.rows ?? [];
    let hasNext = false;
    if (!error && rows.length === pageSize) {
      const probe = await this.#host.catalog.getEntity({
        entity_name: entity,
        operation: {},
        page_size: 1,
        page_number: page * pageSize + 1,
      });
      hasNext = (probe.body.table.rows?.length ?? 0) > 0;
    }
    const hasPrevious = page > 1;
    const hrefFor = (n: number) => pageHref(screen.url, query, pageKey, n);
    return {
      type: 'datagrid',
      name: component.name,
      entity,
      columns: read.body.table.columns ?? [],
      rows,
      page,
      pageSize,
      hasPrevious,
      hasNext,
      previousHref: hasPrevious ? hrefFor(page - 1) : null,
      nextHref: hasNext ? hrefFor(page + 1) : null,
      error,
    };
  }
}

function resolveForm(
  component: Extract<Component, { type: 'form' }>,
  state: FormState | undefined,
): ResolvedForm {
  return {
    type: 'form',
    name: component.name,
    workflow: component.form.job.workflow_name,
    error: state?.formError ?? null,
    items: component.form.form_items.map((item) => {
      const property = itemProperty(item);
      const value = state && Object.hasOwn(state.values, property) ? String(state.values[property]) : null;
      const config = item.number_config;
      return {
        label: item.label,
        property,
        type: item.type,
        required: item.required ?? false,
        numberConfig: config ? numberConfig(config) : null,
        value,
        error: state?.itemErrors.get(property) ?? null,
      };
    }),
  };
}

function numberConfig(config: {
  min?: number | undefined;
  max?: number | undefined;
  step?: number | undefined;
}): { min?: number; max?: number; step?: number } {
  const out: { min?: number; max?: number; step?: number } = {};
  if (config.min !== undefined) out.min = config.min;
  if (config.max !== undefined) out.max = config.max;
  if (config.step !== undefined) out.step = config.step;
  return out;
}

function findComponent(screen: Screen, name: string): Component | undefined {
  for (const row of screen.components)
    for (const component of row) if (component.name === name) return component;
  return undefined;
}

/** Query parameters as a plain record; the first value of a repeated name wins. */
function toQuery(query: ScreenQuery | URLSearchParams | undefined): ScreenQuery {
  const out: ScreenQuery = {};
  const entries =
    query === undefined ? [] : query instanceof URLSearchParams ? [...query] : Object.entries(query);
  for (const [key, value] of entries) {
    if (!Object.hasOwn(out, key)) setOwn(out, key, String(value));
  }
  return out;
}

function sameScreen(url: string, query: ScreenQuery): string {
  const search = new URLSearchParams(Object.entries(query)).toString();
  return `/screens/${url}${search ? `?${search}` : ''}`;
}

function pageHref(url: string, query: ScreenQuery, key: string, page: number): string {
  const params = new URLSearchParams(Object.entries(query));
  if (page <= 1) params.delete(key);
  else params.set(key, String(page));
  const search = params.toString();
  return `/screens/${url}${search ? `?${search}` : ''}`;
}

/** What the screen says when a form's workflow fails or its redirect cannot be built. @internal */
export function plainFailure(run: RunRecord | null): string {
  return run
    ? `Something went wrong while processing this form. Reference: run ${run.id}.`
    : 'Something went wrong while processing this form.';
}
