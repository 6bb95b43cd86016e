import { z } from 'zod';
import { defineStepSchema } from './base.js';

/** What a wait does when its time is up: fail the step, or go on with `timed_out: true`. */
export const ON_TIMEOUT = ['fail', 'continue'] as const;

/** The longest a wait may wait: 366 days, in seconds. */
export const MAX_WAIT_SECONDS = 366 * 24 * 3600;

const TimeoutSeconds = z.number().int().min(1).max(MAX_WAIT_SECONDS);

/** Who may decide an approval: anyone with one of `roles`, or one of `users` (ids or e-mail addresses). */
export const AssigneesSchema = z
  .object({
    roles: z.array(z.string().min(1)).optional(),
    users: z.array(z.string().min(1)).optional(),
  })
  .strict()
  .refine((a) => (a.roles?.length ?? 0) + (a.users?.length ?? 0) > 0, {
    message: 'assignees must name at least one role or user: otherwise nobody could decide',
  });

/** Who is told that an approval waits, by chat and by e-mail. */
export const WaitNotifySchema = z
  .object({
    chat: z
      .object({ provider: z.string().min(1), channel: z.string().min(1) })
      .strict()
      .optional(),
    email: z
      .object({ to: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]) })
      .strict()
      .optional(),
  })
  .strict();

/**
 * A wait for people's decisions. The first rejection, or `required` approvals, ends it; its output is
 * `{ approved, decisions: [{ by, at, approved, comment?, data? }], timed_out }`.
 */
export const ApprovalWaitSchema = z
  .object({
    kind: z.literal('approval'),
    /** Shown in the inbox and on the approval's page. */
    title: z.string().min(1).max(500),
    description: z.string().max(10_000).optional(),
    assignees: AssigneesSchema,
    /** Approvals needed; one rejection ends the wait at once. @default 1 */
    required: z.number().int().min(1).max(100).optional(),
    /** JSON Schema of the extra answers a decision carries (its `data`). */
    form: z.record(z.string(), z.unknown()).optional(),
    /** Whether the person who started the run may decide. @default false */
    self_approval: z.boolean().optional(),
    /** Values shown on the approval's page, by label (usually references to earlier steps' outputs). */
    show: z.record(z.string(), z.unknown()).optional(),
    timeout_seconds: TimeoutSeconds.optional(),
    /** @default 'fail' */
    on_timeout: z.enum(ON_TIMEOUT).optional(),
    notify: WaitNotifySchema.optional(),
  })
  .strict();

/**
 * A wait for an outside event, sent with `engine.events.send(event, payload)`. `match` names fields
 * the payload must have with these values. Its output is `{ payload, timed_out }`.
 */
export const EventWaitSchema = z
  .object({
    kind: z.literal('event'),
    event: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9_.:-]+$/, 'event names are letters, digits, "_", ".", ":" and "-"'),
    match: z.record(z.string(), z.unknown()).optional(),
    timeout_seconds: TimeoutSeconds.optional(),
    /** @default 'fail' */
    on_timeout: z.enum(ON_TIMEOUT).optional(),
  })
  .strict();

/** A wait for a time: `seconds` from when it begins, or `until` an ISO date-time. Output `{ waited_seconds }`. */
export const TimerWaitSchema = z
  .object({
    kind: z.literal('timer'),
    seconds: z.number().min(0).max(MAX_WAIT_SECONDS).optional(),
    until: z.string().min(1).optional(),
  })
  .strict()
  .refine((t) => (t.seconds === undefined) !== (t.until === undefined), {
    message: 'a timer waits either `seconds` or `until` a date-time: give exactly one',
  });

/** `wait_data`: what the step waits for. */
export const WaitDataSchema = z
  .discriminatedUnion('kind', [ApprovalWaitSchema, EventWaitSchema, TimerWaitSchema])
  .superRefine((wait, ctx) => {
    if (wait.kind !== 'timer' && wait.on_timeout !== undefined && wait.timeout_seconds === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['on_timeout'],
        message: 'on_timeout needs timeout_seconds: without it the wait never times out',
      });
  });

/**
 * A `wait` step: the run waits, holding no worker, for an approval, an event or a time; then the
 * step's output says how it ended.
 */
export const WaitStepSchema = defineStepSchema('wait', WaitDataSchema);

/** `wait_data` of a step. */
export type WaitData = z.infer<typeof WaitDataSchema>;
/** An approval wait. */
export type ApprovalWait = z.infer<typeof ApprovalWaitSchema>;
/** An event wait. */
export type EventWait = z.infer<typeof EventWaitSchema>;
/** A timer wait. */
export type TimerWait = z.infer<typeof TimerWaitSchema>;
