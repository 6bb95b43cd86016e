/**
 * A decision is in the run's trace (a span `decision <step>` under the run's span, with who decided
 * and whether, never the comment) and, for a run on the queue, in its event log.
 */
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine, type RunEvent, type WorkflowBody } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => void trace.setGlobalTracerProvider(provider));
afterAll(() => trace.disable());

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const approval: WorkflowBody = {
  name: 'approval',
  steps: [
    {
      name: 'ok',
      type: 'wait',
      wait_data: { kind: 'approval', title: 'OK?', assignees: { roles: ['manager'] } },
    },
  ],
  wires: [],
};

it('a decision is a span of the run, naming who decided and whether, never the comment', async () => {
  const engine = new Engine();
  await engine.workflows.create(approval);
  const run = await engine.run('approval', {});
  const id = run.steps[0]!.wait!.id;
  await engine.as({ id: 'meg', kind: 'user', roles: ['manager'] }).approvals.decide(id, {
    approved: true,
    comment: 'private note',
  });
  const spans = exporter.getFinishedSpans();
  const decision = spans.find((span) => span.name === 'decision ok')!;
  const runSpan = spans.find((span) => span.name === 'run approval')!;
  expect(decision.attributes).toMatchObject({
    'stepwire.run.id': run.id,
    'stepwire.step': 'ok',
    'stepwire.decision.by': 'meg',
    'stepwire.decision.approved': true,
  });
  expect(decision.spanContext().traceId).toBe(runSpan.spanContext().traceId);
  expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('private note');
  await engine.close();
});

it('on the queue, the decision is in the run event log between run.waiting and run.resumed', async () => {
  const db = url ? await openPostgres(url, { schema: schemas.next() }) : await openPostgres();
  const engine = new Engine({ storage: db.storage, queue: db.queue });
  const worker = engine.work({ concurrency: 1, triggers: false });
  try {
    await engine.workflows.create(approval);
    const run = await engine.run('approval', {});
    expect(run.status).toBe('waiting');
    await engine.approvals.decide(run.steps[0]!.wait!.id, { approved: false });
    let types: string[] = [];
    for (let i = 0; i < 200 && !types.includes('run.finished'); i++) {
      types = (await db.queue.events(run.id, 0)).map(({ event }) => (event as RunEvent).type);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const at = (type: string) => types.indexOf(type);
    expect(at('run.waiting')).toBeGreaterThan(-1);
    expect(at('approval.decided')).toBeGreaterThan(at('run.waiting'));
    expect(at('run.resumed')).toBeGreaterThan(at('approval.decided'));
    expect(at('run.finished')).toBeGreaterThan(at('run.resumed'));
  } finally {
    await worker.stop();
    await engine.close();
    await db.close();
  }
}, 60_000);
