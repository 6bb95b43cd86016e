import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';
import { heldStepEngine } from './held-step.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
let db: PostgresDatabase;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  db = await openPostgres(undefined, { queue: { pollSeconds: 0.5 } });
});
afterAll(async () => {
  trace.disable();
  await db.close();
});

it('joins the spans of a durable run across the engines that executed its steps', async () => {
  const starter = new Engine({ storage: db.storage, queue: db.queue });
  const workers = [
    new Engine({ storage: db.storage, queue: db.queue }),
    new Engine({ storage: db.storage, queue: db.queue }),
  ];
  const running = workers.map((engine) => engine.work({ concurrency: 1, triggers: false }));
  const dummy = (name: string, input: Record<string, unknown>) => ({
    name,
    type: 'l2' as const,
    l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: input },
  });
  await starter.workflows.create({
    name: 'spread',
    steps: [dummy('a', { x: 1 }), dummy('b', { x: 2 }), dummy('c', { a: '{{a.x}}', b: '{{b.x}}' })],
    wires: [],
  });
  const record = await starter.run('spread', {}, { traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01` });
  for (const worker of running) await worker.stop();
  expect(record.status).toBe('succeeded');
  const spans = exporter.getFinishedSpans();
  const run = spans.find((s) => s.name === 'run spread')!;
  expect(run.spanContext().traceId).toBe(CALLER_TRACE);
  expect(run.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
  const steps = spans.filter((s) => s.name.startsWith('step '));
  expect(steps.map((s) => s.name).sort()).toEqual(['step a', 'step b', 'step c']);
  for (const step of steps) {
    expect(step.spanContext().traceId).toBe(CALLER_TRACE);
    expect(step.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
  }
  expect(record.traceparent).toBe(`00-${CALLER_TRACE}-${run.spanContext().spanId}-01`);
});

it('ends the span of a step cut short by the run time limit as limit_exceeded, as in process', async () => {
  exporter.reset();
  const engine = await heldStepEngine(db, 'held_traced');
  const worker = engine.work({ concurrency: 1, triggers: false });
  try {
    const record = await (await engine.start('held_traced', {}, { timeoutMs: 300 })).result;
    expect(record.error).toMatchObject({ code: 'limit_exceeded', step: 'hold' });
  } finally {
    await worker.stop();
  }
  await engine.close();
  const step = exporter.getFinishedSpans().find((s) => s.name === 'step hold')!;
  expect(step.attributes['stepwire.error.code']).toBe('limit_exceeded');
  expect(step.attributes['stepwire.status']).toBe('failed');
});
