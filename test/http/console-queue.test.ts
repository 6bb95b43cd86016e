// The console on a durable queue on the PostgreSQL server: a run's event stream read from the
// queue's log (live while a worker executes it, in order, closed after run.finished, resumed by
// Last-Event-ID), and the queue page listing the jobs that wait and run.
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { createHandler } from '../../src/http/index.js';
import { Engine, type ActionDefinition, type WorkflowBody } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const ORIGIN = 'http://127.0.0.1:8787';
const HTML = { accept: 'text/html' };

const releases: (() => void)[] = [];
const hold = {
  provider: 'platform',
  module: 'test',
  action: 'hold',
  input: z.object({ n: z.number() }),
  run: (input: { n: number }) =>
    new Promise<{ n: number }>((resolve) => releases.push(() => resolve({ n: input.n }))),
} satisfies ActionDefinition;

const held: WorkflowBody = {
  name: 'held',
  steps: [
    {
      name: 'wait_here',
      type: 'l2',
      l2_data: { provider: 'platform', module: 'test', action: 'hold', input_data: { n: 1 } },
    },
    {
      name: 'then',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { m: '{{wait_here.n}}' },
      },
    },
  ],
  wires: [],
};

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The messages of an event stream, read to its end. */
async function readStream(
  response: Response,
): Promise<{ id: number; type: string; step?: string | undefined }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => {
      const event = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as { type: string; step?: string };
      return { id: Number(/^id: (.*)$/m.exec(block)![1]), type: event.type, step: event.step };
    });
}

describe.skipIf(url === undefined)('the console on a durable queue (PostgreSQL server)', () => {
  it('streams a run from the queue log live and in order, lists its jobs, and resumes', async () => {
    const db = await openPostgres(url!, {
      schema: schemas.next(),
      queueTiming: { pollSeconds: 0.5 },
    } as never);
    const engine = new Engine({
      storage: db.storage,
      queue: db.queue,
      actions: [hold as unknown as ActionDefinition],
    });
    const worker = engine.work({ concurrency: 1, triggers: false });
    try {
      await engine.workflows.create(held);
      const handler = createHandler(engine);
      const send = (path: string, init: RequestInit = {}) => handler(new Request(`${ORIGIN}${path}`, init));
      const first = await engine.start('held', {});
      const second = await engine.start('held', {});
      await until(() => releases.length === 1, 'the first step to be taken');

      // The queue page: one job runs (concurrency 1), the other waits.
      const queue = await (await send('/console/queue', { headers: HTML })).text();
      expect(queue).toContain('active: 1');
      expect(queue).toContain('waiting: 1');
      // Each run's time limit is a job delayed until then.
      expect(queue).toContain('delayed: 2');
      expect(queue).toContain(`/console/runs/${first.id}`);
      expect(queue).toContain(`/console/runs/${second.id}`);
      expect(queue).toContain('wait_here');

      // Opened while the step runs: what happened so far, then the rest as it happens.
      const stream = await send(`/runs/${first.id}/events`);
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      const reading = readStream(stream);
      await new Promise((resolve) => setTimeout(resolve, 200));
      releases.shift()!();
      // One worker: it may take the second run's first step before the first run's next one.
      await until(() => releases.length === 1, 'the second run to be taken');
      releases.shift()!();
      const events = await reading;
      expect(events.map((e) => [e.type, e.step])).toEqual([
        ['run.started', undefined],
        ['step.started', 'wait_here'],
        ['step.succeeded', 'wait_here'],
        ['step.started', 'then'],
        ['step.succeeded', 'then'],
        ['run.finished', undefined],
      ]);
      expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5, 6]);
      // The ids are the places in the queue's log.
      const logged = await db.queue.events(first.id, 0);
      expect(logged.map((e) => e.seq)).toEqual(events.map((e) => e.id));

      const resumed = await readStream(
        await send(`/runs/${first.id}/events`, { headers: { 'last-event-id': '3' } }),
      );
      expect(resumed.map((e) => [e.id, e.type])).toEqual([
        [4, 'step.started'],
        [5, 'step.succeeded'],
        [6, 'run.finished'],
      ]);

      expect((await first.result).status).toBe('succeeded');
      expect((await second.result).status).toBe('succeeded');
      const empty = await (await send('/console/queue', { headers: HTML })).text();
      expect(empty).toContain('active: 0');
      expect(empty).toContain('waiting: 0');
    } finally {
      for (const release of releases.splice(0)) release();
      await worker.stop();
      await engine.close();
      await db.close();
    }
  }, 60_000);
});
