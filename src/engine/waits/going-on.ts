/**
 * Waiting runs going on: when a wait ends (a decision, an event, its time), its run goes on. With a
 * queue the step goes on the queue again and any worker takes it; without one the run goes on in
 * this process, one continuation of a run at a time, and the times waits end at are kept as timers
 * (armed again from the storage when an engine opens it).
 * @module
 */
import type { StorageAdapter } from '../../adapters/types.js';
import type { RunInitiator } from '../../schema/run-record-types.js';
import type { Workflow } from '../../schema/index.js';
import type { Plan, RunServices } from '../plan-types.js';
import type { RunRecord } from '../record.js';
import { Execution } from '../run.js';
import { MAX_TIMER_MS } from '../../retry/index.js';
import type { WaitBook } from './wait-book.js';

/** What waiting runs need from the engine. @internal */
export interface GoingOnHost {
  storage: StorageAdapter;
  book: WaitBook;
  /** Durable runs, when the engine has a queue: their steps go on the queue again. */
  durable: { resume(id: string, step: string): Promise<'resumed' | 'stale' | 'not_durable'> } | undefined;
  /** The plan of a workflow as it was at a version. */
  planAt(name: string, version: number | undefined): Promise<Plan>;
  /** The services a run of `initiator` runs with. */
  services(initiator: RunInitiator | undefined, workflow: Workflow): RunServices;
  /** Runs an execution of this process (cancellable, waited for by `close`). */
  launch(execution: Execution): Promise<RunRecord>;
  /** Where an error of a run going on in the background is told (it is kept in no record). */
  onError(error: unknown): void;
}

/** Waiting runs of one engine. @internal */
export class WaitingRuns {
  readonly #host: GoingOnHost;
  /** Per run, the continuation under way: one at a time. */
  readonly #chains = new Map<string, Promise<void>>();
  /** Timers of waits' times in this process, by wait id. */
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  #closed = false;

  constructor(host: GoingOnHost) {
    this.#host = host;
  }

  /**
   * A wait of `step` of run `id` ended: the run goes on. Resolves once that is under way (on the
   * queue: committed), not when the run ends.
   */
  async resume(id: string, step: string): Promise<void> {
    // A run on the queue goes on there; a child run executed inside a step of one goes on here.
    if (this.#host.durable && (await this.#host.durable.resume(id, step)) !== 'not_durable') return;
    if (this.#closed) return;
    const previous = this.#chains.get(id) ?? Promise.resolve();
    const next = previous.then(() => this.#goOn(id)).catch((error: unknown) => this.#host.onError(error));
    this.#chains.set(id, next);
    void next.then(() => {
      if (this.#chains.get(id) === next) this.#chains.delete(id);
    });
  }

  /**
   * Cancels a waiting run of this process (one not on the queue): it ends `cancelled`, its waiting
   * steps `failed` with `stopped`; a parent waiting for it goes on (and fails). False when it was
   * not waiting.
   */
  cancel(id: string): Promise<boolean> {
    const previous = this.#chains.get(id) ?? Promise.resolve();
    const next = previous.then(async () => {
      const record = await this.#host.storage.get<RunRecord>('runs', id);
      if (record?.status !== 'waiting') return false;
      const at = new Date().toISOString();
      const stop = { code: 'stopped', message: 'the run was cancelled while this step waited' };
      const cancelled: RunRecord = {
        ...record,
        status: 'cancelled',
        error: {
          code: 'cancelled',
          message: 'the run was cancelled',
          step: record.steps.find((s) => s.status === 'waiting')?.name ?? '',
        },
        finished_at: at,
        steps: record.steps.map((s) =>
          s.status === 'waiting' ? { ...s, status: 'failed', error: stop, finished_at: at } : s,
        ),
      };
      if (cancelled.error && cancelled.error.step === '') delete cancelled.error.step;
      await this.#host.storage.put('runs', id, cancelled);
      if (cancelled.parent_run_id !== undefined) await this.#parentGoesOn(cancelled);
      return true;
    });
    this.#chains.set(
      id,
      next.then(
        () => undefined,
        () => undefined,
      ),
    );
    return next;
  }

  /** Arms a timer for each waiting step of a run of this process whose wait has a time. */
  watch(record: RunRecord): void {
    if (this.#closed || record.status !== 'waiting') return;
    for (const step of record.steps)
      if (step.status === 'waiting' && step.wait?.due_at !== undefined)
        this.#arm(step.wait.id, Date.parse(step.wait.due_at), record.id, step.name);
  }

  /**
   * On opening the storage (without a queue): the waits whose time is kept get their timers again,
   * and runs whose wait ended while no engine ran them go on.
   */
  async recover(): Promise<void> {
    if (this.#host.durable) return;
    for (const record of await this.#host.book.open()) {
      if (await this.#host.book.end(record)) await this.resume(record.run_id, record.step);
      else if (record.due_at !== undefined)
        this.#arm(record.id, Date.parse(record.due_at), record.run_id, record.step);
    }
  }

  /** Stops the timers; continuations under way finish (`close` waits for their runs). */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #arm(waitId: string, at: number, runId: string, step: string): void {
    if (this.#timers.has(waitId) || Number.isNaN(at)) return;
    const left = Math.max(0, at - Date.now());
    const timer = setTimeout(
      () => {
        this.#timers.delete(waitId);
        // A timer waits at most about 24.8 days: a later time is armed again.
        if (left > MAX_TIMER_MS) this.#arm(waitId, at, runId, step);
        else void this.resume(runId, step);
      },
      Math.min(left, MAX_TIMER_MS),
    );
    // A process is not kept alive by a wait's timer alone.
    (timer as { unref?: () => void }).unref?.();
    this.#timers.set(waitId, timer);
  }

  async #goOn(id: string): Promise<void> {
    const record = await this.#host.storage.get<RunRecord>('runs', id);
    if (!record || record.status !== 'waiting') return;
    const plan = await this.#host.planAt(record.workflow, record.workflow_version);
    const services = this.#host.services(record.initiator, plan.workflow);
    const execution = Execution.goOn(plan, record, services, {});
    const after = await this.#host.launch(execution);
    this.watch(after);
    if (after.status !== 'waiting' && after.parent_run_id !== undefined) await this.#parentGoesOn(after);
  }

  /** A child run that waited has ended: its parent's step that waited for it goes on. */
  async #parentGoesOn(child: RunRecord): Promise<void> {
    const parent = await this.#host.storage.get<RunRecord>('runs', child.parent_run_id!);
    // A parent going on right now (another item's child ended) still gets this: its step looks
    // again once it is done, or looks once more now (on a queue).
    if (!parent || (parent.status !== 'waiting' && parent.status !== 'running')) return;
    const waiting = parent.steps.filter((s) => s.status === 'waiting' && s.wait?.kind === 'run');
    // A plain step names the child it waits for; a for_each step names one of its items' children,
    // and any of them ending lets it look again.
    const step = waiting.find((s) => s.wait!.id === child.id) ?? waiting.find((s) => s.items !== undefined);
    if (step) await this.resume(parent.id, step.name);
  }
}
