/**
 * `GET /runs/{id}/events`: a run's events as Server-Sent Events, in order, ending after
 * `run.finished`. A run on the durable queue is read from the queue's event log (woken by its
 * notifications, polled besides); any other run is followed through its stored record, whose
 * changes are sent as the events they stand for.
 * @module
 */
import { z } from 'zod';
import type { RunQueue } from '../../adapters/queue.js';
import type { RunEvent, RunRecord } from '../../engine/record.js';
import { defineRoute, type ResponseMedia, type RouteEngine } from '../route.js';

/** How often a stream looks at the run when no notification came, in ms. */
const POLL_MS = 500;
/** A comment line this often keeps proxies from closing a quiet stream, in ms. */
const KEEP_ALIVE_MS = 15_000;
/** Polls of a queued run without an event after which its stored status is read. */
const QUIET_POLLS = 4;

const FINAL = new Set(['succeeded', 'failed', 'cancelled', 'interrupted', 'timed_out']);

/** Headers of an event stream: never cached, never buffered by a proxy. */
const STREAM_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  'x-accel-buffering': 'no',
  'x-content-type-options': 'nosniff',
};

/** One event to send: its id (for `Last-Event-ID`) and the event. */
interface Sent {
  id: number;
  event: RunEvent;
}

/** Where the events of a run come from: the next ones after `after`, and whether the run has ended. */
interface Source {
  next(after: number): Promise<{ events: Sent[]; ended: boolean }>;
  /** Calls `wake` when the run may have changed; returns what stops it. */
  watch(wake: () => void): () => void;
}

/** The route of a run's event stream. @internal */
export const EVENT_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/runs/{id}/events',
    name: 'runs.events',
    summary: "A run's events as Server-Sent Events",
    description:
      "The run's events in order (`run.started`, `step.started`, `step.succeeded`, ... `run.finished`), one `message` each: its `data` is the event as JSON and its `id` its place in the run's log; the stream ends after `run.finished`. `Last-Event-ID` (or `after`) resumes after that event. A run on the durable queue is read from its event log; a run executing in another engine without a queue is followed through its stored record (its steps' changes, no logs or retries). Needs what `GET /runs/{id}` needs.",
    params: z.object({ id: z.string().describe('Run id') }),
    query: z.strictObject({
      after: z
        .string()
        .regex(/^\d{1,9}$/, 'must be a whole number in decimal digits')
        .transform(Number)
        .optional()
        .describe('Send the events after this one (as `Last-Event-ID`).'),
    }),
    headers: [
      {
        name: 'Last-Event-ID',
        description: 'The id of the last event received: the stream goes on after it.',
        pattern: '^\\d{1,9}$',
      },
    ],
    responses: {
      200: {
        description: 'The event stream (`text/event-stream`).',
        schema: z.string(),
        media: 'text/event-stream' as ResponseMedia,
      },
    },
    problems: [400, 404],
    action: async ({ engine, host, params, query, request }) => {
      const { after: fromQuery } = query();
      const header = request.headers.get('last-event-id');
      const after = header !== null && /^\d{1,9}$/.test(header.trim()) ? Number(header.trim()) : fromQuery;
      // Reading the record checks that the principal may see the run (404 or 403 as GET /runs/{id}).
      const record = await engine.getRun(params.id);
      const queue = host.options.queue;
      const durable = queue?.available === true && (await queue.load(params.id)) !== undefined;
      const source = durable ? queueSource(queue, params.id, engine) : recordSource(engine, record);
      return new Response(eventStream(source, after ?? 0, request.signal), { headers: STREAM_HEADERS });
    },
  }),
] as const;

/** The events of a run on the queue: its log, in order. */
function queueSource(queue: RunQueue, id: string, engine: Pick<RouteEngine, 'getRun'>): Source {
  let quiet = 0;
  return {
    async next(after) {
      const logged = await queue.events(id, after);
      const events: Sent[] = [];
      for (const { seq, event } of logged) {
        events.push({ id: seq, event: event as RunEvent });
        if ((event as RunEvent).type === 'run.finished') return { events, ended: true };
      }
      if (events.length > 0) {
        quiet = 0;
        return { events, ended: false };
      }
      // A record made final without its `run.finished` in the log (or a run deleted) still ends it.
      if (++quiet < QUIET_POLLS) return { events, ended: false };
      quiet = 0;
      const record = await engine.getRun(id).catch(() => undefined);
      if (record === undefined) return { events, ended: true };
      if (!FINAL.has(record.status)) return { events, ended: false };
      return { events: [{ id: after + 1, event: finishedOf(record) }], ended: true };
    },
    watch(wake) {
      return queue.watch((runId) => {
        if (runId === id) wake();
      });
    },
  };
}

/**
 * The events of a run followed through its stored record: what each read shows that the last did
 * not, ordered by time, numbered from 1 in the order they are sent.
 */
function recordSource(engine: Pick<RouteEngine, 'getRun'>, first: RunRecord): Source {
  const sent = new Set<string>();
  let count = 0;
  let record: RunRecord | undefined = first;
  return {
    async next(after) {
      record ??= await engine.getRun(first.id).catch(() => undefined);
      const current = record;
      record = undefined;
      if (current === undefined) return { events: [], ended: true };
      const events: Sent[] = [];
      for (const [key, event] of eventsOf(current)) {
        if (sent.has(key)) continue;
        sent.add(key);
        count += 1;
        // Resumed: the events up to `after` were sent before.
        if (count > after) events.push({ id: count, event });
      }
      return { events, ended: FINAL.has(current.status) };
    },
    watch() {
      return () => undefined;
    },
  };
}

/** The events a record stands for, each with a key that names it once, in the order they happened. */
function eventsOf(record: RunRecord): [string, RunEvent][] {
  const run_id = record.id;
  const timed: [string, RunEvent, number][] = [
    [
      'run',
      { type: 'run.started', run_id, workflow: record.workflow, at: record.started_at },
      Date.parse(record.started_at),
    ],
  ];
  const add = (key: string, event: RunEvent) => timed.push([key, event, Date.parse(event.at) || 0]);
  for (const step of record.steps) {
    const { name } = step;
    if (step.started_at)
      add(`${name}:started:${step.attempts}`, {
        type: 'step.started',
        run_id,
        step: name,
        attempt: Math.max(step.attempts, 1),
        at: step.started_at,
      });
    if (step.wait && step.status === 'waiting')
      add(`${name}:waiting:${step.wait.id}`, {
        type: 'step.waiting',
        run_id,
        step: name,
        wait: step.wait,
        at: step.started_at ?? record.started_at,
      });
    const at = step.finished_at ?? record.finished_at ?? record.started_at;
    const took =
      step.started_at && step.finished_at ? Date.parse(step.finished_at) - Date.parse(step.started_at) : 0;
    if (step.status === 'succeeded')
      add(`${name}:end`, { type: 'step.succeeded', run_id, step: name, duration_ms: took, at });
    else if (step.status === 'skipped') add(`${name}:end`, { type: 'step.skipped', run_id, step: name, at });
    else if (step.status === 'failed' && step.error)
      add(`${name}:end`, {
        type: 'step.failed',
        run_id,
        step: name,
        error: step.error,
        duration_ms: took,
        at,
      });
  }
  if (record.status === 'waiting') {
    const waiting = record.steps.filter((s) => s.status === 'waiting').map((s) => s.name);
    add(`waiting:${waiting.join(',')}`, {
      type: 'run.waiting',
      run_id,
      waiting,
      at: record.steps.reduce(
        (latest, s) => (s.started_at && s.started_at > latest ? s.started_at : latest),
        record.started_at,
      ),
    });
  }
  timed.sort((a, b) => a[2] - b[2]);
  const events = timed.map(([key, event]): [string, RunEvent] => [key, event]);
  // The end comes last, whatever its time says.
  if (FINAL.has(record.status)) events.push(['finished', finishedOf(record)]);
  return events;
}

/** The `run.finished` event of a final record. */
function finishedOf(record: RunRecord): RunEvent {
  return {
    type: 'run.finished',
    run_id: record.id,
    status: record.status as Extract<RunEvent, { type: 'run.finished' }>['status'],
    error: record.error,
    at: record.finished_at ?? new Date().toISOString(),
  };
}

/**
 * The stream: every event after `after` as it comes, a keep-alive comment now and then, closed
 * after the run ends or when the client goes away.
 */
function eventStream(source: Source, after: number, signal: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let stop = () => {};
  return new ReadableStream<Uint8Array>({
    start(controller) {
      let last = after;
      let closed = false;
      let pulling = false;
      let again = false;
      let lastWrite = Date.now();
      const write = (text: string) => {
        controller.enqueue(encoder.encode(text));
        lastWrite = Date.now();
      };
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        unwatch();
        signal.removeEventListener('abort', close);
        try {
          controller.close();
        } catch {
          // Closed by the client already.
        }
      };
      stop = close;
      const pull = async () => {
        if (pulling) return void (again = true);
        pulling = true;
        try {
          do {
            again = false;
            if (closed) return;
            const { events, ended } = await source.next(last);
            if (closed) return;
            for (const { id, event } of events) {
              write(`id: ${id}\ndata: ${JSON.stringify(event)}\n\n`);
              last = id;
            }
            if (ended) return close();
          } while (again);
          if (Date.now() - lastWrite >= KEEP_ALIVE_MS) write(': keep-alive\n\n');
        } catch {
          // The database may be restarting, or the run was deleted: the next poll tries again.
        } finally {
          pulling = false;
        }
      };
      write('retry: 2000\n\n');
      const timer = setInterval(() => void pull(), POLL_MS);
      const unwatch = source.watch(() => void pull());
      if (signal.aborted) return close();
      signal.addEventListener('abort', close, { once: true });
      void pull();
    },
    cancel() {
      stop();
    },
  });
}

/**
 * The events of an event stream's text (as `GET /runs/{id}/events` sends it): each message's JSON
 * `data`, in order; comments and other fields are left out. @internal
 */
export function eventsOfStream(text: string): RunEvent[] {
  const events: RunEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    if (data.length > 0) events.push(JSON.parse(data.join('\n')) as RunEvent);
  }
  return events;
}
