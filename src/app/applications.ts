import { createOrReplace } from '../adapters/create-or-replace.js';
import { NotFoundError, ValidationError, type Issue } from '../errors/index.js';
import {
  ApplicationSchema,
  ResourceNameSchema,
  check,
  type Application,
  type ApplicationBody,
  type Entity,
  type FormItem,
  type Workflow,
} from '../schema/index.js';
import type { AppHost } from './host.js';
import { itemProperty } from './form.js';
import { AppRuntime } from './runtime.js';
import { choiceType, refIssues } from './check-entities.js';
import { writeFormIssues } from './check-entities.js';
import { chartIssues, gridIssues } from './check-grids.js';
import {
  DefinitionHistory,
  type DefinitionWriteOptions,
  type VersionPage,
  type VersionQuery,
} from '../adapters/definition-history.js';

/**
 * Application configurations, reached as `engine.applications`. A config is validated against the
 * catalog and the workflows when stored; `open(name)` gives its runtime.
 */
export class Applications {
  #host: AppHost;
  #ready: () => Promise<void>;
  #history: DefinitionHistory | undefined;

  /** @internal */
  constructor(host: AppHost, ready: () => Promise<void>) {
    this.#host = host;
    this.#ready = ready;
  }

  /** The history, made on first use: the host's options are not set yet when this is constructed. */
  get #versions(): DefinitionHistory {
    return (this.#history ??= new DefinitionHistory(this.#host.options.storage));
  }

  /**
   * Stores (or replaces) an application config, after checking it against the catalog and the
   * workflows: forms name existing workflows and their items match the workflow's input (or write
   * an existing entity, items filling its columns and its whole key), grids name existing entities
   * and their columns, redirects go to screens of the same app.
   * @throws {@link ValidationError} with every problem and its path.
   */
  async put(
    name: string,
    config: ApplicationBody,
    options: DefinitionWriteOptions = {},
  ): Promise<{ application: Application; created: boolean }> {
    await this.#ready();
    const validName = check(ResourceNameSchema, name);
    if (!validName.ok) throw new ValidationError(validName.issues.map((i) => ({ ...i, path: 'name' })));
    const application = await this.validate(config);
    const history = this.#versions;
    return history.changing('application', name, async () => {
      const created = await createOrReplace(this.#host.options.storage, 'applications', name, application);
      await history.record('application', name, created ? 'create' : 'replace', application, options.by);
      return { application, created };
    });
  }

  /** An application config. @throws {@link NotFoundError} */
  async get(name: string): Promise<Application> {
    await this.#ready();
    const application = await this.#host.options.storage.get<Application>('applications', name);
    if (!application) throw new NotFoundError('application', name);
    return application;
  }

  /** Every application name, ordered. */
  async list(): Promise<string[]> {
    await this.#ready();
    return (await this.#host.options.storage.list('applications')).map((entry) => entry.key);
  }

  /** Deletes an application; resolves with whether it existed. */
  async delete(name: string, options: DefinitionWriteOptions = {}): Promise<boolean> {
    await this.#ready();
    const history = this.#versions;
    return history.changing('application', name, async () => {
      const existed = await this.#host.options.storage.delete('applications', name);
      if (existed) await history.record('application', name, 'delete', null, options.by);
      return existed;
    });
  }

  /**
   * The versions of an application config, oldest first, a page at a time: one per put and delete.
   * @throws {@link NotFoundError} when no application of that name was ever stored.
   */
  async versions(name: string, query: VersionQuery = {}): Promise<VersionPage<Application>> {
    await this.#ready();
    const storage = this.#host.options.storage;
    return this.#versions.list('application', name, query, () => storage.get('applications', name));
  }

  /** The forms of the stored applications that run `workflow`, each with its application's name. @internal */
  async formsRunning(workflow: string): Promise<{ application: string; form: string }[]> {
    const forms: { application: string; form: string }[] = [];
    for (const { key, value } of await this.#host.options.storage.list<Application>('applications'))
      for (const screen of value.screens)
        for (const component of screen.components.flat())
          if (
            component.type === 'form' &&
            component.form.job.type === 'sync' &&
            component.form.job.workflow_name === workflow
          )
            forms.push({ application: key, form: component.name });
    return forms;
  }

  /** The runtime of a stored application: screens with their data, form submissions, redirects. */
  async open(name: string): Promise<AppRuntime> {
    return new AppRuntime(this.#host, name, await this.get(name));
  }

  /**
   * The runtime of a stored application on another host: the engine as one principal sees it, so
   * grids read and forms write and run as that principal (`engine.as(p).applications.open`). @internal
   */
  async openAs(name: string, host: AppHost): Promise<AppRuntime> {
    return new AppRuntime(host, name, await this.get(name));
  }

  /** Checks a config against the schema, the catalog and the workflows. @throws {@link ValidationError} */
  async validate(config: ApplicationBody): Promise<Application> {
    const shape = check(ApplicationSchema, config);
    if (!shape.ok) throw new ValidationError(shape.issues);
    const application = shape.value;
    const issues: Issue[] = [];
    const entities = new Map((await this.#host.catalog.listEntities()).map((e) => [e.name, e]));
    const workflows = new Map((await this.#host.workflows.list()).map((w) => [w.name, w]));
    application.screens.forEach((screen, s) =>
      screen.components.forEach((row, r) =>
        row.forEach((component, c) => {
          const at = `screens[${s}].components[${r}][${c}]`;
          if (component.type === 'datagrid') issues.push(...gridIssues(component, entities, at));
          if (component.type === 'chart' || component.type === 'metric')
            issues.push(...chartIssues(component, entities, at));
          if (component.type === 'form') issues.push(...refIssues(component, entities, at));
          if (component.type === 'form' && component.form.job.type === 'write')
            issues.push(...writeFormIssues(component, component.form.job, entities, at));
          if (component.type === 'form' && component.form.job.type === 'sync') {
            const job = component.form.job;
            const workflow = workflows.get(job.workflow_name);
            if (!workflow) {
              issues.push({
                code: 'unknown_workflow',
                path: `${at}.form.job.workflow_name`,
                message: `form "${component.name}" runs workflow "${job.workflow_name}", which does not exist`,
              });
            } else {
              issues.push(
                ...checkFormItems(
                  component.form.form_items,
                  workflow,
                  `${at}.form.form_items`,
                  component.name,
                  entities,
                ),
              );
            }
            const redirect = component.form.do?.redirect_data.url;
            if (redirect && workflow)
              issues.push(...checkOutputRefs(redirect, workflow, `${at}.form.do.redirect_data.url`));
          }
          if (component.type === 'button') {
            const url = component.button.event.redirect_data.url;
            if (/\{\{\s*output\./.test(url)) {
              issues.push({
                code: 'invalid_redirect',
                path: `${at}.button.event.redirect_data.url`,
                message: `button "${component.name}" has no workflow output to take {{output...}} from`,
              });
            }
          }
        }),
      ),
    );
    if (issues.length > 0) throw new ValidationError(issues);
    return application;
  }
}

function checkFormItems(
  items: FormItem[],
  workflow: Workflow,
  path: string,
  form: string,
  entities: ReadonlyMap<string, Entity>,
): Issue[] {
  const issues: Issue[] = [];
  const schema = workflow.workflow_input?.input_schema as
    { properties?: Record<string, { type?: unknown }>; required?: unknown } | undefined;
  const properties = schema?.properties;
  if (!properties) return issues;
  const filled = new Set<string>();
  items.forEach((item, i) => {
    const property = itemProperty(item);
    filled.add(property);
    const declared = Object.hasOwn(properties, property) ? properties[property] : undefined;
    if (!declared) {
      issues.push({
        code: 'unknown_property',
        path: `${path}[${i}]`,
        message: `form "${form}" item "${item.label}" fills "${property}", which is not an input property of workflow "${workflow.name}" (properties: ${Object.keys(properties).join(', ')})`,
      });
      return;
    }
    // A ref to an unknown entity or column is refused by refIssues; its type is not known.
    if (item.type === 'ref' && choiceType(item, entities).ref === undefined) return;
    const types = ([] as unknown[]).concat(declared.type ?? []);
    const fits: Record<string, string[]> = {
      number: ['number', 'integer'],
      text: ['string'],
      string: ['string'],
      boolean: ['boolean'],
      date: ['string'],
      textarea: ['string'],
      checkbox: ['boolean'],
      // A choice sends text, or a number when its options (a ref's value column) are numbers.
      select: choiceType(item, entities).numericOptions ? ['string', 'number', 'integer'] : ['string'],
      ref: choiceType(item, entities).ref === 'NUMBER' ? ['number', 'integer'] : ['string'],
    };
    if (types.length > 0 && !types.some((t) => fits[item.type]?.includes(String(t)))) {
      issues.push({
        code: 'type_mismatch',
        path: `${path}[${i}].type`,
        message: `form item "${item.label}" is of type ${item.type}, but input property "${property}" is ${types.join(' or ')}`,
      });
    }
  });
  const required = Array.isArray(schema?.required) ? (schema.required as string[]) : [];
  const defaults = workflow.workflow_input?.default_data ?? {};
  for (const property of required) {
    if (!filled.has(property) && !Object.hasOwn(defaults, property)) {
      issues.push({
        code: 'missing_item',
        path,
        message: `form "${form}" has no item for "${property}", a required input property of workflow "${workflow.name}"`,
      });
    }
  }
  return issues;
}

function checkOutputRefs(url: string, workflow: Workflow, path: string): Issue[] {
  const output = workflow.workflow_output?.output_data;
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return [];
  const issues: Issue[] = [];
  for (const match of url.matchAll(/\{\{\s*output\.([^}.[\s]+)[^}]*\}\}/g)) {
    if (!Object.prototype.hasOwnProperty.call(output, match[1]!)) {
      issues.push({
        code: 'unknown_output',
        path,
        message: `redirect uses {{output.${match[1]}}}, but workflow "${workflow.name}" has no output "${match[1]}" (outputs: ${Object.keys(output).join(', ')})`,
      });
    }
  }
  return issues;
}
