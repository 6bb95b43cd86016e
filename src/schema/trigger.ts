import { z } from 'zod';
import { NameSchema } from './entity.js';
import { ResourceNameSchema } from './resource-name.js';

/** Row events an entity trigger can fire on. */
export const ENTITY_EVENTS = ['created', 'updated', 'deleted'] as const;

const base = {
  name: ResourceNameSchema,
  workflow_name: NameSchema,
  /** The run's input; a webhook's JSON body is laid over it. */
  input_data: z.record(z.string(), z.unknown()).optional(),
};

/** A trigger that starts a workflow on a clock: a five-field cron in a time zone. */
export const ScheduleTriggerSchema = z.strictObject({
  ...base,
  type: z.literal('schedule'),
  schedule_data: z.strictObject({
    cron: z.string().min(1).max(1000),
    timezone: z.string().min(1).max(100).optional(),
  }),
});

/** A trigger that starts a workflow when `POST /hooks/{name}` is called; with a secret, signed calls only. */
export const WebhookTriggerSchema = z.strictObject({
  ...base,
  type: z.literal('webhook'),
  webhook_data: z.strictObject({ secret: z.string().min(16).optional() }).default({}),
});

/** A trigger that starts a workflow once per changed row of an entity, polled every interval. */
export const EntityTriggerSchema = z.strictObject({
  ...base,
  type: z.literal('entity'),
  entity_data: z.strictObject({
    entity_name: NameSchema,
    events: z.array(z.enum(ENTITY_EVENTS)).min(1),
    interval_seconds: z.number().int().min(1).max(86_400).optional(),
  }),
});

/** A trigger definition: `schedule`, `webhook` or `entity`, each with its `<type>_data`. */
export const TriggerSchema = z.discriminatedUnion('type', [
  ScheduleTriggerSchema,
  WebhookTriggerSchema,
  EntityTriggerSchema,
]);

/** A trigger definition. */
export type Trigger = z.output<typeof TriggerSchema>;
/** A trigger definition as written (defaults not filled in). */
export type TriggerBody = z.input<typeof TriggerSchema>;

const stored = { created_at: z.string().describe('When the trigger was created (ISO time).') };

/** A trigger as stored and shown: its definition, when it was created, a webhook's secret hidden. */
export const StoredTriggerSchema = z.discriminatedUnion('type', [
  ScheduleTriggerSchema.extend(stored),
  WebhookTriggerSchema.extend({
    ...stored,
    webhook_data: z.strictObject({ secret: z.string().optional().describe('Shown as "********" when set.') }),
  }),
  EntityTriggerSchema.extend(stored),
]);
