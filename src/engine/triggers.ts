/**
 * Trigger definitions: stored, validated against the workflows and the catalog when created.
 * @module
 */
import { Cron } from 'croner';
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
import { TriggerSchema, check, type Trigger } from '../schema/index.js';

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

/** The cron of a schedule trigger, parsed: five fields, in its time zone (UTC unless it names one). */
export function scheduleOf(trigger: Extract<Trigger, { type: 'schedule' }>): Cron {
  return new Cron(trigger.schedule_data.cron, {
    timezone: trigger.schedule_data.timezone ?? 'UTC',
    mode: '5-part',
    paused: true,
  });
}

/** Triggers: `engine.triggers`. */
export class TriggerRegistry {
  readonly #storage: StorageAdapter;
  readonly #checks: TriggerChecks;
  readonly #ready: () => Promise<void>;

  constructor(storage: StorageAdapter, checks: TriggerChecks, ready: () => Promise<void>) {
    this.#storage = storage;
    this.#checks = checks;
    this.#ready = ready;
  }

  /**
   * Stores a new trigger after checking it: its shape, that its workflow (and entity) exist, that a
   * cron parses in its time zone, and that the input its runs get fits the workflow's `input_schema`
   * where it is known now: a schedule's whole input (`input_data`); a webhook's `input_data`
   * properties (the body may add or replace properties, never remove one); an entity trigger's
   * `input_data` with `event` (each listed event), `previous` (null for `created`), `row` (null for
   * `deleted`) and the shape of `key`, `row` and `previous` (objects of the entity's key columns and
   * columns; their values come from the sheet and are checked when each run starts).
   * @throws {@link ValidationError} listing every problem with its path; {@link ConflictError} when the name is taken.
   */
  async create(definition: unknown): Promise<StoredTrigger> {
    await this.#ready();
    const parsed = check(TriggerSchema, definition);
    if (!parsed.ok) throw new ValidationError(parsed.issues);
    const trigger = parsed.value;
    const issues = await this.#problems(trigger);
    if (issues.length > 0) throw new ValidationError(issues);
    const stored: StoredTrigger = { ...trigger, created_at: new Date().toISOString() };
    if (!(await this.#storage.put('triggers', trigger.name, stored, { ifAbsent: true })))
      throw new ConflictError('trigger', trigger.name);
    return stored;
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
  async delete(name: string): Promise<boolean> {
    await this.#ready();
    await this.#storage.delete('trigger_state', name);
    return this.#storage.delete('triggers', name);
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
      else if (zoneOk)
        try {
          if (scheduleOf(trigger).nextRun() === null) issues.push(cronIssue('never fires (no such date)'));
        } catch (error) {
          const why = error instanceof Error ? error.message : String(error);
          issues.push(cronIssue(`is not a five-field cron (minute hour day month weekday): ${why}`));
        }
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
  const holds = rest === '' ? SHAPE_CODES.has(issue.code) : direct && PROPERTY_CODES.has(issue.code);
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

/** Names a cron field may hold besides numbers: months in the fourth, weekdays in the fifth. */
const CRON_NAMES = [
  [],
  [],
  [],
  ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
];
const CRON_FIELDS = ['minute', 'hour', 'day of month', 'month', 'day of week'];
/** Per field: the least and the greatest value (a weekday 7 is Sunday, as 0 is). */
const CRON_RANGES = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
] as const;
/** Per field: one list item, `*` or a value or a range, with an optional `/step`. */
const CRON_ITEMS = CRON_NAMES.map((names) => {
  const value = names.length > 0 ? `(\\d+|${names.join('|')})` : '(\\d+)';
  return new RegExp(`^(?:(\\*)|${value}(?:-${value})?)(?:/(\\d+))?$`, 'i');
});

/**
 * Why a cron is not standard five-field cron, or `undefined`: each field a list of `*`, values or
 * ranges, each with an optional `/step`; values are numbers, or names of months and weekdays. The
 * extensions croner also reads (`@daily`, `L`, `W`, `#`, `?`, seconds) are refused: other cron
 * implementations read them differently or not at all. Values, ranges and steps are checked here,
 * so the message quotes the item as written (croner's own shift day and month values by one).
 */
function cronSyntaxProblem(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return `it has ${fields.length} field${fields.length === 1 ? '' : 's'}`;
  for (let f = 0; f < 5; f++)
    for (const item of fields[f]!.split(',')) {
      const problem = cronItemProblem(item, f);
      if (problem !== undefined) return `the ${CRON_FIELDS[f]} field has "${item}"${problem}`;
    }
  return undefined;
}

/** What is wrong with one list item of field `f` (after a colon), `''` when it is no cron item at all. */
function cronItemProblem(item: string, f: number): string | undefined {
  const match = CRON_ITEMS[f]!.exec(item);
  if (!match) return '';
  const [, star, from, to, step] = match;
  const [least, most] = CRON_RANGES[f]!;
  const names = CRON_NAMES[f]!;
  // A name is its number; SUN ending a range is 7, so SAT-SUN is Saturday and Sunday.
  const valueOf = (text: string, end: boolean) => {
    const named = names.indexOf(text.toUpperCase());
    if (named < 0) return Number(text);
    return f === 4 && named === 0 && end ? 7 : named + (f === 3 ? 1 : 0);
  };
  for (const [text, end] of [
    [from, false],
    [to, true],
  ] as const) {
    if (text === undefined) continue;
    const value = valueOf(text, end);
    if (!(value >= least && value <= most)) return `: ${text} is not from ${least} to ${most}`;
  }
  if (from !== undefined && to !== undefined && valueOf(from, false) > valueOf(to, true))
    return ': the range runs backwards';
  if (step === undefined) return undefined;
  if (star === undefined && to === undefined) return ': a step follows "*" or a range';
  const span = f === 4 ? 7 : most - least + 1;
  if (!(Number(step) >= 1 && Number(step) <= span)) return `: the step must be from 1 to ${span}`;
  return undefined;
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
