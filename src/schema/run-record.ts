import { z } from 'zod';
import { IssueSchema } from './issues.js';

/**
 * Statuses of a run. `queued`: accepted but not started yet (a durable mode queues runs);
 * `waiting`: a `wait` step waits for an approval, an event or a time, and nothing else runs;
 * `interrupted`: the engine running it stopped before it finished.
 */
export const RUN_STATUSES = [
  'queued',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
  'interrupted',
] as const;

/**
 * Statuses of a step in a run record. `running` and `waiting` (a `wait` step whose wait has not
 * ended) only show while the run goes on; `pending` is never stored: steps that never started are
 * left out of the record.
 */
export const STEP_STATUSES = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'skipped'] as const;

/** Where a `waiting` step waits. */
export const StepWaitSchema = z.object({
  id: z
    .string()
    .describe("The wait's id (an approval's id for `GET /approvals/{id}`), or the child run's for `run`."),
  kind: z
    .enum(['approval', 'event', 'timer', 'run'])
    .describe('What it waits for: an approval, an event, a time, or (`run`) a child run that waits.'),
  due_at: z.string().exactOptional().describe('When it times out (a timer: when it ends), ISO.'),
});

/** An error as kept in a run record. */
export const RunErrorSchema = z.object({
  code: z.string().describe('Stable code, e.g. `step_failed`, `limit_exceeded`, `cancelled`.'),
  message: z.string().describe('What went wrong, naming the step.'),
  step: z.string().exactOptional().describe('The step that failed, when one did.'),
  issues: z.array(IssueSchema).exactOptional().describe('Problems with their paths, for validation errors.'),
});

/** Failures a run record lists per `for_each` step; `failed` counts every one. */
export const LISTED_ITEM_FAILURES = 100;

/** One failed item of a `for_each` step. */
export const ItemFailureSchema = z.object({
  index: z.number().int().min(0).describe('Index of the item in the list, from 0.'),
  attempts: z.number().int().min(0).describe('Attempts made for the item.'),
  error: RunErrorSchema.describe('Why the item failed.'),
});

/**
 * The items of a `for_each` step in a run record: counts, and the failures listed (the first 100 by
 * index). When the step has finished, `succeeded + failed + skipped` is `total`.
 */
export const StepItemsSchema = z.object({
  total: z.number().int().min(0).describe('Items in the list.'),
  succeeded: z.number().int().min(0).describe('Items that succeeded.'),
  failed: z.number().int().min(0).describe('Items that failed (listed or not).'),
  skipped: z
    .number()
    .int()
    .min(0)
    .describe('Items that did not run: their conditions did not hold, or the step stopped before them.'),
  failures: z
    .array(ItemFailureSchema)
    .max(LISTED_ITEM_FAILURES)
    .describe('The failed items with the lowest indexes, at most 100, in index order.'),
});

/** One step of a run record. */
export const StepRecordSchema = z.object({
  name: z.string().describe('Step name.'),
  status: z.enum(STEP_STATUSES).describe('Where the step is; `pending` is never stored.'),
  attempts: z.number().int().min(0).describe('Attempts made (0 when not started or skipped).'),
  started_at: z.string().nullable().describe('ISO time the step started, or null.'),
  finished_at: z.string().nullable().describe('ISO time the step ended, or null.'),
  output: z.unknown().describe("The step's output; null when skipped or not finished."),
  error: RunErrorSchema.nullable().describe('Why the step failed, or null.'),
  logs: z.array(z.string()).exactOptional().describe('Lines a transform script logged.'),
  items: StepItemsSchema.exactOptional().describe('The items of a `for_each` step, summarized.'),
  wait: StepWaitSchema.exactOptional().describe('Where a `wait` step waits (kept once it has ended).'),
});

/** Who started a run (never a secret). */
export const RunInitiatorSchema = z
  .object({
    id: z.string().describe("The principal's id."),
    kind: z.enum(['user', 'key', 'service']).describe("The principal's kind."),
    roles: z.array(z.string()).describe('Its roles when the run started.'),
    email: z.string().exactOptional().describe('Its e-mail address, when it had one.'),
  })
  .describe('Who started a run.');

/** The record of one workflow run, as the storage adapter keeps it and the HTTP API serves it. */
export const RunRecordSchema = z
  .object({
    id: z.string().describe('Run id.'),
    workflow: z.string().describe('Workflow name.'),
    status: z.enum(RUN_STATUSES).describe('Where the run is.'),
    input: z.unknown().describe('The input after defaults.'),
    output: z.unknown().describe('The workflow output; null unless succeeded.'),
    error: RunErrorSchema.nullable().describe('Why the run failed, or null.'),
    started_at: z.string().describe('ISO start time.'),
    finished_at: z.string().nullable().describe('ISO end time, or null while running.'),
    steps: z.array(StepRecordSchema).describe('The steps that started or were skipped, in definition order.'),
    parent_run_id: z
      .string()
      .exactOptional()
      .describe('The run that started this one with `run_workflow`; absent for a run started directly.'),
    retry_of: z
      .string()
      .exactOptional()
      .describe('The run this one retries (`POST /runs/{id}/retry`): the steps it kept are copied from it.'),
    initiator: RunInitiatorSchema.exactOptional().describe(
      "Who started the run; its steps read and write as it. Absent for a run the host's own engine started.",
    ),
    workflow_version: z
      .number()
      .int()
      .positive()
      .exactOptional()
      .describe(
        "The version of the workflow's definition the run ran (`GET /workflows/{name}/versions`); absent when not known (a definition stored before definitions kept a history).",
      ),
    traceparent: z
      .string()
      .exactOptional()
      .describe(
        "W3C trace context of the run's OpenTelemetry span, when one is recorded; work on the run elsewhere continues this trace.",
      ),
  })
  .describe('The record of one workflow run.');

/**
 * What a run list shows of one run (`engine.listRuns`, `GET /runs`): who, what, where and when,
 * without its input, output or step records. The whole record is read one run at a time.
 */
export const RunSummarySchema = z
  .object({
    id: z.string().describe('Run id.'),
    workflow: z.string().describe('Workflow name.'),
    status: z.enum(RUN_STATUSES).describe('Where the run is.'),
    started_at: z.string().describe('ISO start time.'),
    finished_at: z.string().nullable().describe('ISO end time, or null while running.'),
    error: z
      .object({
        code: z.string().describe('Stable code, e.g. `step_failed`, `limit_exceeded`, `cancelled`.'),
        message: z.string().describe('What went wrong, naming the step.'),
      })
      .nullable()
      .describe("The code and message of the run's error, or null."),
    parent_run_id: z
      .string()
      .exactOptional()
      .describe('The run that started this one with `run_workflow`; absent for a run started directly.'),
    initiator: RunInitiatorSchema.exactOptional().describe(
      "Who started the run; its steps read and write as it. Absent for a run the host's own engine started.",
    ),
  })
  .describe('What a run list shows of one run; `GET /runs/{id}` answers its whole record.');
