/**
 * Trigger definitions: stored, validated against the workflows and the catalog when created.
 * @module
 */
import type { StorageAdapter } from '../adapters/types.js';
import {
  ConflictError,
  NotFoundError,
  ValidationError,
  isValidationError,
  issuesUnder,
} from '../errors/index.js';
import { formatIssue, type Issue } from '../errors/index.js';
import { setOwn } from '../schema/own.js';
import { keyPath } from '../json-schema/describe.js';
import { TriggerSchema, check, type Trigger, type TriggerBody } from '../schema/index.js';
import { CronSchedule, cronSyntaxProblem } from './cron-slots.js';
import { depthProblem } from './json-value.js';
import {
  DefinitionHistory,
  type DefinitionWriteOptions,
  type VersionPage,
  type VersionQuery,
} from '../adapters/definition-history.js';

/** A stored trigger: its definition and when it was created (schedules fire only slots after it). */
export type StoredTrigger = Trigger & { created_at: string };

/** What the registry checks a trigger against: the engine, seen through a narrow window. */
export interface TriggerChecks {
  /** Whether a workflow of that name exists. */
  hasWorkflow(name: string): Promise<boolean>;
  /** An entity's column names and primary key, or undefined when there is no such entity. */
  entity(name: string): Promise<{ columns: string[]; primary_key: string[] } | undefined>;
  /** Fills defaults into a workflow input and validates it; throws `ValidationError`. */
  checkInput(workflow: string, input: unknown): Promise<unknown>;
}

/**
 * The cron of a schedule trigger, parsed: five fields, in its time zone (UTC unless it names one).
 * @throws a `TypeError` when the cron is not standard five-field cron (a stored trigger's always is).
 */
export function scheduleOf(trigger: Extract<Trigger, { type: 'schedule' }>): CronSchedule {
  return new CronSchedule(trigger.schedule_data.cron, trigger.schedule_data.timezone ?? 'UTC');
}

/** Triggers: `engine.triggers`. */
export class TriggerRegistry {
  readonly #storage: StorageAdapter;
  readonly #checks: TriggerChecks;
  readonly #ready: () => Promise<void>;
  readonly #history: DefinitionHistory;
  /** The `created_at` (ms) of the last trigger this registry created. */
  #lastCreated = 0;

  constructor(storage: StorageAdapter, checks: TriggerChecks, ready: () => Promise<void>) {
    this.#storage = storage;
    this.#checks = checks;
    this.#ready = ready;
    this.#history = new DefinitionHistory(storage);
  }

  /**
   * Stores a new trigger after checking it: its shape, that its workflow (and entity) exist, that a
   * cron is standard five-field cron naming a real date, and that the input its runs get fits the
   * workflow's `input_schema` where it is known now: a schedule's whole input (`input_data`); a
   * webhook's `input_data` properties (the body may add or replace properties, never remove one); an
   * entity trigger's `input_data` with `event` (each listed event), `previous` (null for `created`),
   * `row` (null for `deleted`) and the shape of `key`, `row` and `previous` (objects of the entity's
   * key columns and columns; their values come from the sheet and are checked when each run starts).
   * @throws {@link ValidationError} listing every problem with its path; {@link ConflictError} when the name is taken.
   */
  async create(definition: TriggerBody, options: DefinitionWriteOptions = {}): Promise<StoredTrigger> {
    await this.#ready();
    const deep = depthProblem(definition);
    if (deep) throw new ValidationError([deep]);
    const parsed = check(TriggerSchema, definition);
    if (!parsed.ok) throw new ValidationError(parsed.issues);
    const trigger = parsed.value;
    const issues = await this.#problems(trigger);
    if (issues.length > 0) throw new ValidationError(issues);
    const stored: StoredTrigger = { ...trigger, created_at: await this.#creationTime(trigger.name) };
    return this.#history.changing('trigger', trigger.name, async () => {
      if (!(await this.#storage.put('triggers', trigger.name, stored, { ifAbsent: true })))
        throw new ConflictError('trigger', trigger.name);
      await this.#history.record('trigger', trigger.name, 'create', stored, options.by);
      return stored;
    });
  }

  /**
   * The time a trigger created now is known by: now, but always later than the last creation of this
   * registry and than the creation a stored state of that name names. A trigger deleted and created
   * again within one millisecond would otherwise share its `created_at` with the deleted one, and take
   * a state a tick still under way writes for that one for its own (its first poll would fire rather
   * than record).
   */
  async #creationTime(name: string): Promise<string> {
    const state = await this.#storage.get<{ trigger?: unknown }>('trigger_state', name);
    const stored = typeof state?.trigger === 'string' ? Date.parse(state.trigger) : Number.NaN;
    const at = Math.max(Date.now(), this.#lastCreated + 1, Number.isNaN(stored) ? 0 : stored + 1);
    this.#lastCreated = at;
    return new Date(at).toISOString();
  }

  /** A trigger by name. @throws {@link NotFoundError} */
  async get(name: string): Promise<StoredTrigger> {
    await this.#ready();
    const trigger = await this.#storage.get<StoredTrigger>('triggers', name);
    if (!trigger) throw new NotFoundError('trigger', name);
    return trigger;
  }

  /** Every trigger, ordered by name. */
  async list(): Promise<StoredTrigger[]> {
    await this.#ready();
    return (await this.#storage.list<StoredTrigger>('triggers')).map((entry) => entry.value);
  }

  /** Removes a trigger and what it remembered; returns whether it existed. */
  async delete(name: string, options: DefinitionWriteOptions = {}): Promise<boolean> {
    await this.#ready();
    return this.#history.changing('trigger', name, async () => {
      await this.#storage.delete('trigger_state', name);
      const existed = await this.#storage.delete('triggers', name);
      if (existed) await this.#history.record('trigger', name, 'delete', null, options.by);
      return existed;
    });
  }

  /**
   * The versions of a trigger, oldest first, a page at a time: one per create and delete.
   * @throws {@link NotFoundError} when no trigger of that name ever existed.
   */
  async versions(name: string, query: VersionQuery = {}): Promise<VersionPage<StoredTrigger>> {
    await this.#ready();
    return this.#history.list('trigger', name, query, () => this.#storage.get('triggers', name));
  }

  async #problems(trigger: Trigger): Promise<Issue[]> {
    const issues: Issue[] = [];
    const workflowExists = await this.#checks.hasWorkflow(trigger.workflow_name);
    if (!workflowExists)
      issues.push({
        code: 'unknown_workflow',
        path: 'workflow_name',
        message: `workflow "${trigger.workflow_name}" does not exist`,
      });
    if (trigger.type === 'schedule') {
      const { cron, timezone: zone } = trigger.schedule_data;
      const cronIssue = (why: string): Issue => ({
        code: 'invalid_cron',
        path: 'schedule_data.cron',
        message: `"${cron}" ${why}`,
      });
      const zoneOk = zone === undefined || isTimeZone(zone);
      if (!zoneOk)
        issues.push({
          code: 'invalid_timezone',
          path: 'schedule_data.timezone',
          message: `"${zone}" is not an IANA time zone such as "Europe/Berlin"`,
        });
      const syntax = cronSyntaxProblem(cron);
      if (syntax !== undefined)
        issues.push(cronIssue(`is not a five-field cron (minute hour day month weekday): ${syntax}`));
      else if (!new CronSchedule(cron).fires) issues.push(cronIssue('never fires (no such date)'));
      if (workflowExists) issues.push(...(await this.#inputIssues(trigger, {})));
    }
    if (trigger.type === 'webhook' && workflowExists) {
      // The body is laid over input_data: only what input_data itself holds is known now.
      const own = new Set(Object.keys(trigger.input_data ?? {}));
      for (const issue of await this.#inputIssues(trigger, {}))
        if (own.has(firstKey(issue.path) ?? '')) issues.push(underInput(issue));
    }
    if (trigger.type === 'entity') {
      const { events, entity_name } = trigger.entity_data;
      events.forEach((event, i) => {
        if (events.indexOf(event) !== i)
          issues.push({
            code: 'duplicate_event',
            path: `entity_data.events[${i}]`,
            message: `event "${event}" is listed twice`,
          });
      });
      const entity = await this.#checks.entity(entity_name);
      if (!entity)
        issues.push({
          code: 'unknown_entity',
          path: 'entity_data.entity_name',
          message: `entity "${entity_name}" does not exist`,
        });
      else if (workflowExists) issues.push(...(await this.#entityInputIssues(trigger, entity)));
    }
    return issues;
  }

  /** The issues of the workflow input made of the trigger's `input_data` with `extra` laid over it. */
  async #inputIssues(trigger: Trigger, extra: Record<string, unknown>): Promise<Issue[]> {
    const input: Record<string, unknown> = {};
    for (const source of [trigger.input_data ?? {}, extra])
      for (const [key, value] of Object.entries(source)) setOwn(input, key, value);
    try {
      await this.#checks.checkInput(trigger.workflow_name, input);
      return [];
    } catch (error) {
      if (!isValidationError(error)) throw error;
      return trigger.type === 'schedule' ? issuesUnder(error.issues, 'input_data') : error.issues;
    }
  }

  /**
   * What an entity trigger's runs would be refused for, whatever the rows: each listed event's input
   * is checked with the entity's columns in `key`, `row` and `previous` holding null, and only the
   * issues that do not depend on those values are kept.
   */
  async #entityInputIssues(
    trigger: Extract<Trigger, { type: 'entity' }>,
    entity: { columns: string[]; primary_key: string[] },
  ): Promise<Issue[]> {
    const columns = (names: string[]) => {
      const value: Record<string, unknown> = {};
      for (const name of names) setOwn(value, name, null);
      return value;
    };
    const { entity_name, events } = trigger.entity_data;
    const found = new Map<string, Issue>();
    for (const [index, event] of events.entries()) {
      if (events.indexOf(event) !== index) continue;
      const overlay: Record<string, unknown> = {
        event,
        key: columns(entity.primary_key),
        row: event === 'deleted' ? null : columns(entity.columns),
        previous: event === 'created' ? null : columns(entity.columns),
      };
      for (const issue of await this.#inputIssues(trigger, overlay)) {
        const kept = entityIssue(issue, overlay, `entity_data.events[${index}]`, event, entity_name);
        if (kept) found.set(`${kept.code}\0${kept.path}\0${kept.message}`, kept);
      }
    }
    return [...found.values()];
  }
}

/** Codes of issues about an object itself that hold whatever its property values are. */
const SHAPE_CODES = new Set(['invalid_type', 'too_small', 'too_big']);
/** Codes of issues about which properties an object has (not their values). */
const PROPERTY_CODES = new Set(['unknown_property', 'required', 'invalid_property_name']);

/**
 * An issue of an entity trigger's run input, kept when it holds for every row: about `input_data`
 * or a property missing beside it, about `event`, about a `row` or `previous` that is null, or about
 * the shape of `key`, `row` and `previous` (an object with the entity's columns). Issues about the
 * column values, or summaries that may depend on them (`anyOf`, `not` at the root), are left to the
 * check each run gets when it starts.
 */
function entityIssue(
  issue: Issue,
  overlay: Record<string, unknown>,
  eventPath: string,
  event: string,
  entity: string,
): Issue | undefined {
  const key = firstKey(issue.path);
  if (key === undefined) return SHAPE_CODES.has(issue.code) ? underInput(issue) : undefined;
  if (!Object.hasOwn(overlay, key)) return underInput(issue);
  const what = `the input of a run for a ${event} row: ${formatIssue(issue)}`;
  if (key === 'event' || overlay[key] === null)
    return issue.path === key ? { ...issue, path: eventPath, message: what } : undefined;
  const rest = issue.path.slice(keyPath('', key).length);
  const direct = /^(?:\.[^.[]+|\["(?:[^"\\]|\\.)*"\])$/.test(rest);
  // At the property itself: its type, or whether the input may have it at all (`additionalProperties`).
  const holds =
    rest === ''
      ? SHAPE_CODES.has(issue.code) || PROPERTY_CODES.has(issue.code)
      : direct && PROPERTY_CODES.has(issue.code);
  if (!holds) return undefined;
  const message = `${key} holds the columns of entity "${entity}": ${formatIssue(issue)}`;
  return { ...issue, path: 'entity_data.entity_name', message };
}

/** The first property of an issue's path (`a` of `a.b[0]`, `x y` of `["x y"].b`); undefined at the root. */
function firstKey(path: string): string | undefined {
  if (path === '') return undefined;
  const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(path);
  if (quoted) return JSON.parse(quoted[1]!) as string;
  return /^[^.[]+/.exec(path)?.[0];
}

/** An issue of the run input, placed under `input_data` of the trigger. */
function underInput(issue: Issue): Issue {
  if (issue.path === '') return { ...issue, path: 'input_data' };
  return {
    ...issue,
    path: issue.path.startsWith('[') ? `input_data${issue.path}` : `input_data.${issue.path}`,
  };
}

/** An IANA zone name the runtime knows (not a UTC offset such as `+01:00`). */
function isTimeZone(zone: string): boolean {
  if (!/^[A-Za-z]/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
