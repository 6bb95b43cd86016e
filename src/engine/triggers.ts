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
import type { Issue } from '../errors/index.js';
import { TriggerSchema, check, type Trigger } from '../schema/index.js';

/** A stored trigger: its definition and when it was created (schedules fire only slots after it). */
export type StoredTrigger = Trigger & { created_at: string };

/** What the registry checks a trigger against: the engine, seen through a narrow window. */
export interface TriggerChecks {
  /** Whether a workflow of that name exists. */
  hasWorkflow(name: string): Promise<boolean>;
  /** Whether an entity of that name exists. */
  hasEntity(name: string): Promise<boolean>;
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
   * cron parses in its time zone, and that a schedule's `input_data` is a valid input of the workflow.
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
    if (!(await this.#checks.hasWorkflow(trigger.workflow_name)))
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
      if (issues.length === 0) {
        try {
          await this.#checks.checkInput(trigger.workflow_name, trigger.input_data ?? {});
        } catch (error) {
          if (!isValidationError(error)) throw error;
          issues.push(...issuesUnder(error.issues, 'input_data'));
        }
      }
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
      if (!(await this.#checks.hasEntity(entity_name)))
        issues.push({
          code: 'unknown_entity',
          path: 'entity_data.entity_name',
          message: `entity "${entity_name}" does not exist`,
        });
    }
    return issues;
  }
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
/** Per field: one list item, `*` or a value or a range, with an optional `/step`. */
const CRON_ITEMS = CRON_NAMES.map((names) => {
  const value = names.length > 0 ? `(?:\\d+|${names.join('|')})` : '\\d+';
  return new RegExp(`^(?:\\*|${value}(?:-${value})?)(?:/\\d+)?$`, 'i');
});

/**
 * Why a cron is not standard five-field cron, or `undefined`: each field a list of `*`, values or
 * ranges, each with an optional `/step`; values are numbers, or names of months and weekdays. The
 * extensions croner also reads (`@daily`, `L`, `W`, `#`, `?`, seconds) are refused: other cron
 * implementations read them differently or not at all. Ranges of values are left to croner.
 */
function cronSyntaxProblem(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return `it has ${fields.length} field${fields.length === 1 ? '' : 's'}`;
  for (let f = 0; f < 5; f++)
    for (const item of fields[f]!.split(','))
      if (!CRON_ITEMS[f]!.test(item)) return `the ${CRON_FIELDS[f]} field has "${item}"`;
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
