import { NotFoundError, ValidationError, isStepwireError, type Issue } from '../errors/index.js';
import type { AppHost } from './host.js';
import type { RunRecord } from '../schema/index.js';
import type { Application, Component, Entity, Screen, Workflow, WriteJob } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { describeValue } from '../schema/issues.js';
import { itemProperty } from './form.js';
import { NO_RULES, assignIssues, inputItems, type ShownItem } from './form.js';
import { coerceSubmission, formChoices, type ItemChoices } from './pickers.js';
import { fillQueryParams, isScreenName, resolveRedirect } from './redirect.js';
import { resolveGrid } from './grid.js';
import { resolveChart, resolveMetric } from './chart.js';
import { SUBMISSION, deleteOnce, isToken, submissionDigest } from './submission.js';
import { prefill, submitWrite, writeItems } from './write-job.js';
import { writeFormIssues } from './check-entities.js';
import type { ResolvedComponent, ResolvedForm, ResolvedScreen, ScreenQuery, SubmitResult } from './types.js';

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
    return this.#resolve(this.#find(url), toQuery(query, 'app.screen: query'), undefined);
  }

  /**
   * Submits a form: coerces the values by item type, runs the form's workflow (bounded by
   * `limits.formRunTimeoutMs`) and computes the redirect. On any problem the screen comes back
   * re-rendered with the values and the errors attached to the form and its items. `values` may
   * be the posted form as a `URLSearchParams` (a name sent twice counts once, its first value).
   * `traceparent`, the W3C trace context of the request that submitted the form, becomes the run
   * span's parent.
   * @throws {@link NotFoundError} when there is no such screen or form; `TypeError` when `values`,
   *   `query` or `options` is not an object.
   */
  async submit(
    url: string,
    component: string,
    values: Readonly<Record<string, string>> | URLSearchParams,
    query?: ScreenQuery | URLSearchParams,
    options: { traceparent?: string | undefined } = {},
  ): Promise<SubmitResult> {
    const posted = toQuery(values, 'app.submit: values', true);
    const params = toQuery(query, 'app.submit: query');
    if (typeof options !== 'object' || options === null)
      throw new TypeError('app.submit: options must be an object, as { traceparent }');
    const screen = this.#find(url);
    const form = findComponent(screen, component);
    if (form?.type !== 'form') throw new NotFoundError('form', `${url}/${component}`);
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
        values: posted,
        itemErrors: byItem,
        formError: formLevel.length > 0 ? formLevel.join(' ') : null,
      };
      return { ok: false, reason, screen: await this.#resolve(screen, params, state), errors, run };
    };

    const job = form.form.job;
    if (job.type === 'write') {
      const entity = await this.#host.catalog.getDefinition(job.entity_name);
      // The entity may have changed since the application was stored (another primary key): a form
      // that no longer fits it would write another row than the one it shows. It writes nothing.
      const stale = staleFormIssues(form, job, entity);
      if (stale.length > 0) return failure('failed', stale, null);
      const coerced = await coerceSubmission(this.#host, writeItems(items, entity, job), posted);
      if (coerced.issues.length > 0) return failure('invalid', coerced.issues, null);
      // A field sent empty empties its cell; a field not sent at all leaves its cell as it is.
      for (const item of items) {
        const property = itemProperty(item);
        if (Object.hasOwn(posted, property) && !Object.hasOwn(coerced.input, property))
          setOwn(coerced.input, property, null);
      }
      const write = () => submitWrite(this.#host, job, coerced.input, params);
      const token = posted[SUBMISSION];
      // A delete repeated after it succeeded finds no row: its token makes a double click delete once.
      const outcome =
        job.write_mode === 'delete' && isToken(token)
          ? await deleteOnce(
              this.#host.options.storage,
              await submissionDigest([
                this.name,
                screen.url,
                component,
                token,
                ...Object.entries(params).flat(),
              ]),
              this.#host.options.limits.formRunTimeoutMs,
              write,
            )
          : await write();
      if (!outcome.ok)
        return failure(outcome.reason === 'invalid' ? 'invalid' : 'failed', outcome.issues, null);
      return this.#redirect(screen, form, params, outcome.output, null, failure);
    }
    const shown = inputItems(items, ...inputOf(await this.#workflow(job.workflow_name)));
    const coerced = await coerceSubmission(this.#host, shown, posted);
    if (coerced.issues.length > 0) return failure('invalid', coerced.issues, null);
    let run: RunRecord;
    try {
      const token = posted[SUBMISSION];
      // The token makes a double submit (a second click, a resent POST) run the workflow once; hashed
      // with the form's names, it is a valid run key however long they are or whatever they hold.
      const key = isToken(token)
        ? `form:${await submissionDigest([this.name, screen.url, component, token])}`
        : undefined;
      run = await this.#host.run(job.workflow_name, coerced.input, {
        timeoutMs: this.#host.options.limits.formRunTimeoutMs,
        traceparent: options.traceparent,
        ...(key === undefined ? {} : { key }),
      });
    } catch (error) {
      if (error instanceof ValidationError) return failure('invalid', error.issues, null);
      // A closed engine is not the form's failure: the caller answers as for any request then.
      if (isStepwireError(error) && error.code !== 'closed')
        return failure('failed', [{ code: error.code, path: '', message: error.message }], null);
      throw error;
    }
    if (run.status !== 'succeeded') {
      const message = run.error?.message ?? `the workflow ended ${run.status}`;
      return failure('failed', [{ code: run.error?.code ?? run.status, path: '', message }], run);
    }
    return this.#redirect(screen, form, params, run.output, run, failure);
  }

  /** Where a form goes after its job succeeded: its `do` redirect, else the same screen. */
  async #redirect(
    screen: Screen,
    form: Extract<Component, { type: 'form' }>,
    params: ScreenQuery,
    output: unknown,
    run: RunRecord | null,
    failure: (reason: 'redirect', errors: Issue[], run: RunRecord | null) => Promise<SubmitResult>,
  ): Promise<SubmitResult> {
    try {
      const redirect = form.form.do
        ? resolveRedirect(form.form.do.redirect_data.url, this.#screens, { output, query: params })
        : sameScreen(screen.url, params);
      return { ok: true, redirect, run, output };
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
    return resolveRedirect(found.button.event.redirect_data.url, this.#screens, {
      query: toQuery(query, 'app.button: query'),
    });
  }

  /**
   * A form with its items, their rules and choices; a write form shows the row its key names until
   * a submission failed.
   */
  async #form(
    component: Extract<Component, { type: 'form' }>,
    query: ScreenQuery,
    state: FormState | undefined,
  ): Promise<ResolvedForm> {
    const job = component.form.job;
    const resolve = async (items: readonly ShownItem[], shownState: FormState | undefined) =>
      resolveForm(
        component,
        items,
        shownState,
        await formChoices(this.#host, component.name, items, shownState?.values ?? {}, query),
      );
    if (job.type === 'sync')
      return resolve(
        inputItems(component.form.form_items, ...inputOf(await this.#workflow(job.workflow_name))),
        state,
      );
    const entity = await this.#host.catalog.getDefinition(job.entity_name);
    const items = writeItems(component.form.form_items, entity, job);
    if (state) return resolve(items, state);
    if (staleFormIssues(component, job, entity).length > 0)
      return resolve(items, {
        component: component.name,
        values: {},
        itemErrors: new Map(),
        formError: STALE_FORM,
      });
    const shown = await prefill(this.#host, job, query);
    return resolve(items, {
      component: component.name,
      values: shown.values ?? {},
      itemErrors: new Map(),
      formError: shown.error,
    });
  }

  /** The workflow a form runs, for the rules of its input; undefined when it cannot be read. */
  async #workflow(name: string): Promise<Workflow | undefined> {
    const workflows = this.#host.workflows;
    try {
      return workflows.get
        ? await workflows.get(name)
        : (await workflows.list()).find((w) => w.name === name);
    } catch (error) {
      if (isStepwireError(error)) return undefined;
      throw error;
    }
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
        return this.#form(component, query, state?.component === component.name ? state : undefined);
      case 'datagrid':
        return resolveGrid(this.#host, screen, component, query);
      case 'chart':
        return resolveChart(this.#host, component, query);
      case 'metric':
        return resolveMetric(this.#host, component, query);
    }
  }
}

function resolveForm(
  component: Extract<Component, { type: 'form' }>,
  items: readonly ShownItem[],
  state: FormState | undefined,
  choices: ReadonlyMap<string, ItemChoices>,
): ResolvedForm {
  const job = component.form.job;
  return {
    type: 'form',
    name: component.name,
    workflow: job.type === 'sync' ? job.workflow_name : null,
    entity: job.type === 'write' ? job.entity_name : null,
    submitLabel: job.type === 'sync' ? 'Submit' : job.write_mode === 'delete' ? 'Delete' : 'Save',
    // A fresh token on every render: a corrected form after a failed run must run again.
    submission: job.type === 'sync' || job.write_mode === 'delete' ? globalThis.crypto.randomUUID() : null,
    error: state?.formError ?? null,
    items: items.map((item) => {
      const property = itemProperty(item);
      const value = state && Object.hasOwn(state.values, property) ? String(state.values[property]) : null;
      const config = item.shownNumber ?? item.number_config;
      const choice = choices.get(property);
      return {
        label: item.label,
        property,
        type: item.type,
        required: item.required ?? false,
        numberConfig: config ? numberConfig(config) : null,
        value,
        error: state?.itemErrors.get(property) ?? null,
        help: item.help ?? null,
        options: choice?.options ?? null,
        search: choice?.search ?? null,
        notice: choice?.notice ?? null,
        rules: item.rules ?? { ...NO_RULES, checks: [] },
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

/** The input schema and defaults of a workflow, as `inputItems` takes them. */
function inputOf(workflow: Workflow | undefined): [unknown, Readonly<Record<string, unknown>>] {
  return [workflow?.workflow_input?.input_schema, workflow?.workflow_input?.default_data ?? {}];
}

function findComponent(screen: Screen, name: string): Component | undefined {
  for (const row of screen.components)
    for (const component of row) if (component.name === name) return component;
  return undefined;
}

/** Query parameters as a plain record; the first value of a repeated name wins. */
/**
 * Query parameters or posted form values as one plain object of strings, a name's first value
 * kept. `required` refuses undefined; anything but an object is a TypeError naming `what`.
 */
function toQuery(
  query: ScreenQuery | URLSearchParams | undefined,
  what: string,
  required = false,
): ScreenQuery {
  if (
    (query === undefined && required) ||
    (query !== undefined && (typeof query !== 'object' || query === null))
  )
    throw new TypeError(
      `${what} must be an object of strings or a URLSearchParams; got ${describeValue(query)}`,
    );
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

/** What the screen says when a form's workflow fails or its redirect cannot be built. @internal */
export function plainFailure(run: RunRecord | null): string {
  return run
    ? `Something went wrong while processing this form. Reference: run ${run.id}.`
    : 'Something went wrong while processing this form.';
}

/** What a write form that no longer fits its entity says on the screen. */
const STALE_FORM =
  'This form cannot be used: the records it edits have changed since the application was made.';

/** The problems of a write form against its entity as it is now; none while the form still fits it. */
function staleFormIssues(
  component: Extract<Component, { type: 'form' }>,
  job: WriteJob,
  entity: Entity,
): Issue[] {
  return writeFormIssues(component, job, new Map([[entity.name, entity]]), `form "${component.name}"`);
}
