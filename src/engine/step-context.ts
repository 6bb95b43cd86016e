/**
 * The context an action is called with: one per step attempt (per item attempt in a `for_each`
 * step). Most actions read little of it, so what costs something to make (the run's signal, the
 * idempotency key, `log`, `runWorkflow`) is made when first read: a step of a plain action costs
 * one small object.
 * @module
 */
import type { MailAdapter } from '../adapters/mail/types.js';
import type { ActionContext } from '../actions/registry.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ChatAdapter, FileStore } from '../adapters/types.js';
import type { PlannedStep, RunServices } from './plan-types.js';
import type { StepRecord } from './record.js';

/** What a step's context needs from its run. @internal */
export interface ContextHost {
  /** The run's id. */
  readonly id: string;
  /** The run's workflow. */
  readonly workflowName: string;
  /** The engine's services. */
  readonly services: RunServices;
  /** The run's signal (a cancel, the time limit). */
  readonly signal: AbortSignal;
  /** Appends a line to the step's log (the item's, when `item` is set) and tells it as an event. */
  logLine(planned: PlannedStep, record: StepRecord, item: number | undefined, message: string): void;
  /** Tells the run that work retrying itself is about to make try `next` (see `ActionContext.retrying`). */
  retryingNow(
    planned: PlannedStep,
    record: StepRecord,
    item: number | undefined,
    next: number,
    delayMs: number,
    reason: string,
  ): void;
  /**
   * Refuses a child run's input that holds a secret value the run resolved (the child's record
   * would keep it). @throws a `StepwireError` `secret_in_input`.
   */
  checkChildInput(input: unknown): void;
  /** Runs a workflow as a child of the run; resolves to its output. */
  runChild(
    name: string,
    input: unknown,
    signal: AbortSignal,
    traceparent: string | undefined,
    key: string,
  ): Promise<unknown>;
}

/** What a context makes when first asked for, or is given beside the usual (kept apart, so a context is small). */
interface Extras {
  /** The step's own signal (its timeout's), else the run's once asked for. */
  signal?: AbortSignal;
  traceparent?: string;
  run?: ActionContext['run'];
  key?: string;
  log?: (message: string) => void;
  runWorkflow?: (name: string, input: unknown) => Promise<unknown>;
}

/** The context of one attempt of a step (or of an item); see the module. @internal */
export class StepContext implements ActionContext {
  readonly #host: ContextHost;
  readonly #planned: PlannedStep;
  readonly #attempt: number;
  readonly #record: StepRecord;
  readonly #item: number | undefined;
  #extras: Extras | undefined;
  /** When this call must end (epoch ms), when the engine knows it: an own property only then. */
  declare deadline?: number;
  /** Only for a step type that retries inside its work (a request step); see `ActionContext.retrying`. */
  declare retrying?: (next: number, delayMs: number, reason: string) => void;

  constructor(
    host: ContextHost,
    planned: PlannedStep,
    attempt: number,
    /** The step's own signal (its timeout's), or undefined for the run's. */
    signal: AbortSignal | undefined,
    record: StepRecord,
    item: number | undefined,
    traceparent: string | undefined,
    deadline: number | undefined,
  ) {
    this.#host = host;
    this.#planned = planned;
    this.#attempt = attempt;
    this.#record = record;
    this.#item = item;
    this.#extras =
      signal === undefined && traceparent === undefined
        ? undefined
        : {
            ...(signal === undefined ? {} : { signal }),
            ...(traceparent === undefined ? {} : { traceparent }),
          };
    if (deadline !== undefined) this.deadline = deadline;
    if (planned.retriesItself)
      this.retrying = (next, delayMs, reason) =>
        host.retryingNow(planned, record, item, next, delayMs, reason);
  }

  /** Cancels the action: the run was cancelled or the step timed out. */
  get signal(): AbortSignal {
    const extras = (this.#extras ??= {});
    return (extras.signal ??= this.#host.signal);
  }

  /** The engine's catalog. */
  get catalog(): Catalog {
    return this.#host.services.catalog;
  }

  /** File stores by provider name. */
  get files(): Readonly<Record<string, FileStore>> {
    return this.#host.services.options.files;
  }

  /** The chat adapter. */
  get chat(): ChatAdapter {
    return this.#host.services.options.chat;
  }

  /** The mail adapter. */
  get mail(): MailAdapter {
    return this.#host.services.options.mail;
  }

  /** The engine's limits. */
  get limits(): Readonly<Record<string, number>> {
    return this.#host.services.options.limits as unknown as Record<string, number>;
  }

  /** The run and step this call belongs to. */
  get run(): ActionContext['run'] {
    const extras = (this.#extras ??= {});
    if (extras.run) return extras.run;
    const run: ActionContext['run'] = {
      id: this.#host.id,
      workflow: this.#host.workflowName,
      step: this.#planned.step.name,
      attempt: this.#attempt,
    };
    if (extras.traceparent) run.traceparent = extras.traceparent;
    if (this.#item !== undefined) run.item = this.#item;
    return (extras.run = run);
  }

  /** `<run id>:<step name>`, with `:<item index>` inside a `for_each` step. */
  get idempotencyKey(): string {
    const extras = (this.#extras ??= {});
    const { id } = this.#host;
    const step = this.#planned.step.name;
    return (extras.key ??= this.#item === undefined ? `${id}:${step}` : `${id}:${step}:${this.#item}`);
  }

  /** Adds a line to the step's log in the run record. */
  get log(): (message: string) => void {
    const extras = (this.#extras ??= {});
    return (extras.log ??= (message) => this.#host.logLine(this.#planned, this.#record, this.#item, message));
  }

  /** Runs a workflow as a child of this run and resolves to its output. */
  get runWorkflow(): (name: string, input: unknown) => Promise<unknown> {
    const extras = (this.#extras ??= {});
    return (extras.runWorkflow ??= async (name, input) => {
      this.#host.checkChildInput(input);
      return this.#host.runChild(name, input, this.signal, extras.traceparent, this.idempotencyKey);
    });
  }
}
