import { z } from 'zod';
import { HttpProblem, problem } from './problem.js';
import { StoredTriggerSchema, TriggerSchema, type TriggerBody } from '../schema/index.js';
import { jsonOf, mediaType, readBytes } from './body.js';
import {
  IDEMPOTENCY_KEY,
  LOCATION,
  defineRoute,
  idempotencyKey,
  json,
  nameParam,
  noContent,
} from './route.js';
import type { Engine } from '../engine/engine.js';
import { startFor, triggerInput } from '../engine/trigger-fire.js';
import type { StoredTrigger } from '../engine/triggers.js';

const enc = encodeURIComponent;
const RUN_ID = z.strictObject({
  run_id: z.string().describe('The run the call started, or started before.'),
});

/** A trigger as answered: a webhook's secret never leaves the server. */
function shown(trigger: StoredTrigger): StoredTrigger {
  if (trigger.type !== 'webhook' || trigger.webhook_data.secret === undefined) return trigger;
  return { ...trigger, webhook_data: { secret: '********' } };
}

/** Routes of triggers, and the webhook calls that start their runs. @internal */
export const TRIGGER_ROUTES = [
  defineRoute({
    method: 'POST',
    path: '/triggers',
    name: 'triggers.create',
    summary: 'Create a trigger',
    body: { media: 'json', schema: TriggerSchema, required: true, description: 'The trigger definition.' },
    responses: { 201: { description: 'Created.', schema: StoredTriggerSchema, headers: LOCATION } },
    problems: [400, 409, 413, 415],
    action: async ({ engine, body, options }) => {
      const trigger = await engine.triggers.create((await body()) as TriggerBody);
      return json(201, shown(trigger), { location: `${options.basePath}/triggers/${enc(trigger.name)}` });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/triggers',
    name: 'triggers.list',
    summary: 'List triggers',
    responses: {
      200: { description: 'Every trigger, ordered by name.', schema: z.array(StoredTriggerSchema) },
    },
    problems: [],
    action: async ({ engine }) => json(200, (await engine.triggers.list()).map(shown)),
  }),
  defineRoute({
    method: 'GET',
    path: '/triggers/{name}',
    name: 'triggers.get',
    summary: 'Read a trigger',
    params: nameParam('Trigger'),
    responses: { 200: { description: 'The trigger.', schema: StoredTriggerSchema } },
    problems: [404],
    action: async ({ engine, params }) => json(200, shown(await engine.triggers.get(params.name))),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/triggers/{name}',
    name: 'triggers.delete',
    summary: 'Delete a trigger',
    params: nameParam('Trigger'),
    responses: { 204: { description: 'Deleted.' } },
    problems: [404],
    action: async ({ engine, params }) => {
      if (!(await engine.triggers.delete(params.name))) await engine.triggers.get(params.name);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/hooks/{name}',
    name: 'hooks.call',
    public: true,
    summary: 'Call a webhook trigger',
    description:
      'Starts the trigger’s workflow with its `input_data` and the JSON body laid over it, and answers 202 at once. With a secret, the request must carry `X-Stepwire-Signature: sha256=<hex HMAC-SHA256 of the raw body>`, else 401 and nothing runs. With an `Idempotency-Key`, a key already used answers 200 with the run it started.',
    params: nameParam('Trigger'),
    headers: [
      IDEMPOTENCY_KEY,
      {
        name: 'X-Stepwire-Signature',
        description:
          'Required when the trigger has a secret: `sha256=` and the hex HMAC-SHA256 of the raw body, keyed with the secret.',
        pattern: '^sha256=[0-9a-fA-F]{64}$',
      },
    ],
    body: {
      media: 'json',
      schema: z.record(z.string(), z.unknown()),
      required: false,
      description: 'Laid over the trigger’s `input_data`; empty means nothing to add.',
    },
    responses: {
      200: { description: 'The Idempotency-Key was used before: the run it started.', schema: RUN_ID },
      202: { description: 'Started.', schema: RUN_ID },
    },
    problems: [400, 401, 404, 413, 415, 503],
    // A webhook is called by another server with the trigger's signature, and starts its run as the trigger.
    action: async ({ host: engine, request, params, options }) => {
      const trigger = await engine.triggers.get(params.name);
      if (trigger.type !== 'webhook')
        throw new HttpProblem(problem(404, 'not_found', `trigger "${params.name}" is not a webhook`));
      const bytes = await readBytes(request, options.maxBodyBytes);
      if (trigger.webhook_data.secret !== undefined)
        await checkSignature(trigger.webhook_data.secret, bytes, request.headers.get('x-stepwire-signature'));
      const read = jsonOf(bytes, mediaType(request), options, true);
      const body = read === undefined ? {} : read;
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new HttpProblem(
          problem(400, 'validation_failed', 'The body must be a JSON object.', [
            { code: 'invalid_type', path: '', message: 'the body must be a JSON object' },
          ]),
        );
      const key = idempotencyKey(request) ?? `delivery:${crypto.randomUUID()}`;
      const fired = await startFor(
        hookHost(engine, request.headers.get('traceparent') ?? undefined),
        trigger,
        triggerInput(trigger, body as Record<string, unknown>),
        key,
      );
      return json(fired.replayed ? 200 : 202, { run_id: fired.run_id });
    },
  }),
] as const;

/** The engine as a webhook call starts runs: the run's trace is a child of the call's `traceparent`. */
function hookHost(engine: Engine, traceparent: string | undefined): Parameters<typeof startFor>[0] {
  return {
    triggers: engine.triggers,
    catalog: engine.catalog,
    storage: engine.options.storage,
    start: (name, input, opts) => engine.start(name, input, { ...opts, traceparent }),
  };
}

/** Checks `sha256=<hex>` against the HMAC-SHA256 of the body; `crypto.subtle.verify` compares in constant time. */
async function checkSignature(secret: string, body: Uint8Array, header: string | null): Promise<void> {
  const refuse = (detail: string) =>
    new HttpProblem(problem(401, 'invalid_signature', detail), {
      'www-authenticate': 'X-Stepwire-Signature',
    });
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (!match) throw refuse('This webhook needs X-Stepwire-Signature: sha256=<hex HMAC-SHA256 of the body>.');
  const signature = new Uint8Array(32);
  for (let i = 0; i < 32; i++) signature[i] = Number.parseInt(match[1]!.slice(i * 2, i * 2 + 2), 16);
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  if (!(await crypto.subtle.verify('HMAC', key, signature, body as Uint8Array<ArrayBuffer>)))
    throw refuse('The X-Stepwire-Signature does not match the body.');
}
