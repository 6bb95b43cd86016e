/**
 * What the chaos tests run: a chain of five steps, each an `l2` action that POSTs to the sink with
 * `Idempotency-Key: <context.idempotencyKey>`, a `for_each` step whose items make that call, and
 * the places where a test may crash a worker. The same definitions serve the worker child processes
 * (which crash with SIGKILL) and the in-process PGlite machines (which freeze, then drop their
 * database).
 */
import { z } from 'zod';
import type { DurableRun, RunChange, RunQueue } from '../../src/adapters/queue.js';
import type { ActionContext, ActionDefinition, RunRecord, Workflow } from '../../src/index.js';

/** Steps of the chaos workflow: `s0` to `s4`. */
export const STEPS = 5;

/**
 * Where a step may crash: before its call to the sink, after the call and before the step's result
 * is committed, or after the commit (before the worker does anything else).
 */
export type CrashPoint = 'before-effect' | 'after-effect' | 'after-commit';

/** A run's crash instruction, in its input: crash at `point` of `step`, once. */
export interface CrashPlan {
  step: string;
  point: CrashPoint;
  /** Crash once for this name, whichever execution gets there first (else once per step execution). */
  once?: string | undefined;
}

/** Input of a chaos run: `crash` for the chain, `rows` for the `for_each` workflow. */
export interface ChaosInput {
  crash?: CrashPlan | null;
  rows?: ChaosRow[];
}

/** One item of the `for_each` workflow: its number and its own crash instruction. */
export interface ChaosRow {
  n: number;
  crash: CrashPlan | null;
}

/** One point reached by one step execution. */
export interface Reached {
  point: CrashPoint;
  /** `<run id>:<step>`, or `<run id>:<step>:<index>` for an item of a `for_each` step. */
  key: string;
  step: string;
  /** The run's crash instruction. */
  plan: CrashPlan | null;
}

/** Called at each crash point; may crash the process or hang like a dead one. */
export type CrashHook = (reached: Reached) => void | Promise<void>;

/** The chaos workflow: `s0` -> `s4`, each step passing the previous step's `n` on. */
export function chaosWorkflow(name = 'chaos'): Workflow {
  return {
    name,
    steps: Array.from({ length: STEPS }, (_, i) => ({
      name: `s${i}`,
      type: 'l2' as const,
      l2_data: {
        provider: 'chaos',
        module: 'sink',
        action: 'call',
        input_data: { n: i, crash: '{{input.crash}}', ...(i > 0 ? { previous: `{{s${i - 1}.n}}` } : {}) },
      },
    })),
    wires: [],
  } as Workflow;
}

/** The `for_each` step of {@link forEachWorkflow}. */
export const EACH_STEP = 'each';

/**
 * The `for_each` chaos workflow: step `each` calls the sink once per row of `input.rows` (its
 * `concurrency` items at a time), each item with the row's crash instruction; step `after` then
 * calls it with the number of items that succeeded.
 */
export function forEachWorkflow(name = 'chaos-each', concurrency = 4): Workflow {
  const call = { provider: 'chaos', module: 'sink', action: 'call' };
  return {
    name,
    steps: [
      {
        name: EACH_STEP,
        type: 'l2',
        for_each: '{{input.rows}}',
        concurrency,
        l2_data: { ...call, input_data: { n: '{{item.n}}', crash: '{{item.crash}}' } },
      },
      {
        name: 'after',
        type: 'l2',
        l2_data: { ...call, input_data: { n: `{{${EACH_STEP}.succeeded}}`, crash: null } },
      },
    ],
    wires: [],
  } as Workflow;
}

/** `count` rows for {@link forEachWorkflow}; `crashes` maps an item's index to where it crashes. */
export function chaosRows(count: number, crashes: Record<number, CrashPoint> = {}): ChaosRow[] {
  return Array.from({ length: count }, (_, n) => ({
    n,
    crash: crashes[n] === undefined ? null : { step: EACH_STEP, point: crashes[n] },
  }));
}

const CRASH_PLAN = z
  .object({
    step: z.string(),
    point: z.enum(['before-effect', 'after-effect', 'after-commit']),
    once: z.string().optional(),
  })
  .nullable();

/** Whether `plan` asks for a crash at `point` of `step`. */
export function planned(plan: CrashPlan | null, step: string, point: CrashPoint): boolean {
  return plan !== null && plan.step === step && plan.point === point;
}

/**
 * The action `chaos/sink/call`: POSTs `{ n }` to the sink with the step's idempotency key and
 * returns `{ n, count }` (how many calls with that key the sink had seen). `hook` runs before and
 * after the call.
 */
export function sinkAction(sinkUrl: string, hook: CrashHook): ActionDefinition {
  const input = z.object({ n: z.number(), previous: z.number().optional(), crash: CRASH_PLAN });
  return {
    provider: 'chaos',
    module: 'sink',
    action: 'call',
    input,
    async run(data: z.output<typeof input>, context: ActionContext) {
      const at = { key: context.idempotencyKey, step: context.run.step, plan: data.crash };
      await hook({ point: 'before-effect', ...at });
      const response = await fetch(sinkUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': context.idempotencyKey },
        body: JSON.stringify({ n: data.n }),
        signal: context.signal,
      });
      if (!response.ok) throw new Error(`the sink answered ${response.status}: ${await response.text()}`);
      const { count } = (await response.json()) as { count: number };
      await hook({ point: 'after-effect', ...at });
      return { n: data.n, count };
    },
  } as ActionDefinition;
}

/**
 * The queue with `hook` called at `after-commit` once a delivered step's result is committed, or an
 * item's outcome (the item's crash instruction is read from the run's input then).
 */
export function hookedQueue(queue: RunQueue, hook: CrashHook): RunQueue {
  return {
    get available() {
      return queue.available;
    },
    begin: (id, change) => queue.begin(id, change),
    async commit(id, delivery, decide: (run: DurableRun) => RunChange | undefined, loaded) {
      const change = await queue.commit(id, delivery, decide, loaded);
      if (delivery && change && delivery.job.step !== '') {
        const { step } = delivery.job;
        const plan = ((change.record as RunRecord).input as ChaosInput).crash ?? null;
        await hook({ point: 'after-commit', key: `${id}:${step}`, step, plan });
      }
      return change;
    },
    async commitState(id, delivery, decide) {
      const change = await queue.commitState(id, delivery, decide);
      const item = delivery?.job.item;
      if (item !== undefined && change && change.results.length > 0) {
        const { step } = delivery!.job;
        const input = ((await queue.load(id))?.record as RunRecord | undefined)?.input as
          ChaosInput | undefined;
        const plan = input?.rows?.[item]?.crash ?? null;
        await hook({ point: 'after-commit', key: `${id}:${step}:${item}`, step, plan });
      }
      return change;
    },
    items: (id, step) => queue.items(id, step),
    log: (id, events) => queue.log(id, events),
    load: (id, log) => queue.load(id, log),
    events: (id, after) => queue.events(id, after),
    watch: (listener) => queue.watch(listener),
    work: (handler, options) => queue.work(handler, options),
  };
}

/** Queue timing of every chaos test: a dead worker's step comes back 10 to 11 s after its last heartbeat. */
export const QUEUE_TIMING = { heartbeatSeconds: 10, monitorSeconds: 1, pollSeconds: 0.5 };
