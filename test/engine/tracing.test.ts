import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type WorkflowInputBody } from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { appEngine } from '../app/helpers.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const SECRET = 'customer-secret-4711';
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

let server: Server;
let origin: string;
const received: (string | undefined)[] = [];

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  server = createServer((req, res) => {
    received.push(req.headers['traceparent'] as string | undefined);
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  exporter.reset();
  received.length = 0;
});
afterAll(async () => {
  trace.disable();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** echo -> call (a request step) -> flaky (fails once, then succeeds on its retry). */
function workflow(): WorkflowInputBody {
  return {
    name: 'traced',
    steps: [
      {
        name: 'echo',
        type: 'l2',
        l2_data: {
          provider: 'platform',
          module: 'dummy',
          action: 'dummy_task',
          input_data: { s: '{{input.s}}' },
        },
      },
      {
        name: 'call',
        type: 'request',
        request_data: { url: `http://${origin}/hook`, method: 'POST', body: { s: '{{echo.s}}' } },
      },
      {
        name: 'flaky',
        type: 'l2',
        retry: { attempts: 2, backoff_ms: 0 },
        l2_data: {
          provider: 'test',
          module: 'trace',
          action: 'flaky',
          input_data: { after: '{{call.status}}' },
        },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { s: { type: 'string' } } },
    },
  };
}

async function tracedEngine(failAlways = false): Promise<Engine> {
  let calls = 0;
  const engine = new Engine({
    security: { allowHosts: [origin] },
    actions: [
      {
        provider: 'test',
        module: 'trace',
        action: 'flaky',
        input: z.object({ after: z.number() }),
        run: () => {
          calls += 1;
          if (failAlways || calls === 1) throw new Error('the service hiccuped');
          return { ok: true };
        },
      },
    ],
  });
  await engine.workflows.create(workflow());
  return engine;
}

const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('OpenTelemetry spans', () => {
  it('records the run as a child of the request traceparent, and each step attempt below it', async () => {
    const handler = createHandler(await tracedEngine());
    const response = await handler(
      new Request('http://api.test/workflows/traced/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
        body: JSON.stringify({ s: SECRET }),
      }),
    );
    const record = (await response.json()) as { id: string; status: string; traceparent?: string };
    expect(record.status).toBe('succeeded');

    const spans = exporter.getFinishedSpans();
    const [run] = byName(spans, 'run traced');
    expect(run).toBeDefined();
    expect(run!.spanContext().traceId).toBe(CALLER_TRACE);
    expect(parentOf(run!)).toBe(CALLER_SPAN);
    expect(run!.attributes).toEqual({
      'stepwire.workflow': 'traced',
      'stepwire.run.id': record.id,
      'stepwire.status': 'succeeded',
    });
    expect(run!.status.code).toBe(SpanStatusCode.OK);
    // The record carries the run's trace context, for whoever continues the run elsewhere.
    expect(record.traceparent).toBe(`00-${CALLER_TRACE}-${run!.spanContext().spanId}-01`);

    const steps = spans.filter((s) => s.name.startsWith('step '));
    expect(steps.map((s) => s.name)).toEqual(['step echo', 'step call', 'step flaky', 'step flaky']);
    for (const step of steps) {
      expect(step.spanContext().traceId).toBe(CALLER_TRACE);
      expect(parentOf(step)).toBe(run!.spanContext().spanId);
    }
    const [first, second] = byName(spans, 'step flaky');
    expect(first!.attributes).toEqual({
      'stepwire.workflow': 'traced',
      'stepwire.run.id': record.id,
      'stepwire.step': 'flaky',
      'stepwire.step.type': 'l2',
      'stepwire.step.attempt': 1,
      'stepwire.status': 'retried',
      'stepwire.error.code': 'step_failed',
    });
    expect(first!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'step_failed' });
    expect(second!.attributes['stepwire.step.attempt']).toBe(2);
    expect(second!.attributes['stepwire.status']).toBe('succeeded');

    // The request step sent the trace context of its own span.
    const [call] = byName(spans, 'step call');
    expect(received).toEqual([`00-${CALLER_TRACE}-${call!.spanContext().spanId}-01`]);
    // No input or output value is recorded anywhere.
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status]))).not.toContain(
      SECRET,
    );
  });

  it('keeps values out of a failed span: a validation message quoting the value is not its status', async () => {
    const engine = new Engine({
      actions: [
        {
          provider: 'test',
          module: 'trace',
          action: 'count',
          input: z.object({ n: z.number() }),
          run: () => ({ ok: true }),
        },
      ],
    });
    await engine.workflows.create({
      name: 'quoting',
      steps: [
        {
          name: 'count',
          type: 'l2',
          l2_data: { provider: 'test', module: 'trace', action: 'count', input_data: { n: '{{input.s}}' } },
        },
      ],
      wires: [],
    });
    const record = await engine.run('quoting', { s: SECRET });
    // The run record keeps the whole message for the caller; the spans only the code.
    expect(record.error?.message).toContain(SECRET);
    const spans = exporter.getFinishedSpans();
    expect(byName(spans, 'step count')[0]!.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'validation_failed',
    });
    expect(byName(spans, 'run quoting')[0]!.status.message).toBe('step "count" failed: validation_failed');
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.events, s.status]))).not.toContain(SECRET);
  });

  it('marks a failed run and its failing step as errors', async () => {
    const engine = await tracedEngine(true);
    const record = await engine.run('traced', { s: 'x' });
    expect(record.status).toBe('failed');
    const spans = exporter.getFinishedSpans();
    const [run] = byName(spans, 'run traced');
    // Without a traceparent the run starts a trace of its own.
    expect(run!.parentSpanContext).toBeUndefined();
    expect(run!.attributes['stepwire.status']).toBe('failed');
    expect(run!.status.code).toBe(SpanStatusCode.ERROR);
    expect(run!.status.message).toBe('step "flaky" failed: step_failed');
    const flaky = byName(spans, 'step flaky');
    expect(flaky.map((s) => s.attributes['stepwire.status'])).toEqual(['retried', 'failed']);
  });

  it('records an error code an action made from data as "error", never the data', async () => {
    const engine = new Engine({
      actions: [
        {
          provider: 'test',
          module: 'trace',
          action: 'leaky',
          input: z.object({ email: z.string() }),
          run: (input) => {
            throw Object.assign(new Error('no such customer'), {
              code: `missing ${(input as { email: string }).email}`,
            });
          },
        },
      ],
    });
    await engine.workflows.create({
      name: 'leaky',
      steps: [
        {
          name: 'find',
          type: 'l2',
          l2_data: {
            provider: 'test',
            module: 'trace',
            action: 'leaky',
            input_data: { email: 'alice@example.com' },
          },
        },
      ],
      wires: [],
    });
    const record = await engine.run('leaky');
    expect(record.error?.code).toBe('missing alice@example.com');
    const spans = exporter.getFinishedSpans();
    const [step] = byName(spans, 'step find');
    const [run] = byName(spans, 'run leaky');
    expect(step!.attributes['stepwire.error.code']).toBe('error');
    expect(run!.status.message).toBe('step "find" failed: error');
    expect(JSON.stringify(spans.map((s) => [s.attributes, s.status]))).not.toContain('alice');
  });

  it('parents the run of a submitted form on the form request', async () => {
    const { engine } = await appEngine();
    const response = await createHandler(engine)(
      new Request('http://api.test/applications/shop/screens/start/forms/lookup', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', traceparent: TRACEPARENT },
        body: 'customer_id=3',
      }),
    );
    expect(response.status).toBe(303);
    const [run] = byName(exporter.getFinishedSpans(), 'run lookup');
    expect(run!.spanContext().traceId).toBe(CALLER_TRACE);
    expect(parentOf(run!)).toBe(CALLER_SPAN);
  });

  it('parents the run a webhook call starts on the call', async () => {
    const engine = await tracedEngine();
    await engine.triggers.create({
      name: 'hook',
      type: 'webhook',
      workflow_name: 'traced',
      webhook_data: {},
    });
    const response = await createHandler(engine)(
      new Request('http://api.test/hooks/hook', {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
        body: JSON.stringify({ s: 'x' }),
      }),
    );
    expect(response.status).toBe(202);
    const { run_id } = (await response.json()) as { run_id: string };
    for (let i = 0; i < 100 && byName(exporter.getFinishedSpans(), 'run traced').length === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const [run] = byName(exporter.getFinishedSpans(), 'run traced');
    expect(run!.attributes['stepwire.run.id']).toBe(run_id);
    expect(parentOf(run!)).toBe(CALLER_SPAN);
  });

  it('gives each item of a for_each step its spans, and a child run a span below the calling attempt', async () => {
    const engine = new Engine();
    await engine.workflows.create({
      name: 'child',
      steps: [
        {
          name: 'echo',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { n: '{{input.n}}' },
          },
        },
      ],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { n: { type: 'number' } } },
      },
    });
    await engine.workflows.create({
      name: 'parent',
      steps: [
        {
          name: 'each',
          type: 'l2',
          for_each: '{{input.numbers}}',
          l2_data: {
            provider: 'platform',
            module: 'workflows',
            action: 'run_workflow',
            input_data: { workflow_name: 'child', input: { n: '{{item}}' } },
          },
        },
      ],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: {
          type: 'object',
          properties: { numbers: { type: 'array', items: { type: 'number' } } },
        },
      },
    });
    const record = await engine.run('parent', { numbers: [1, 2, 3] });
    expect(record.status).toBe('succeeded');
    const spans = exporter.getFinishedSpans();
    const [parent] = byName(spans, 'run parent');
    const items = byName(spans, 'step each');
    expect(items.map((s) => s.attributes['stepwire.step.item']).sort()).toEqual([0, 1, 2]);
    for (const item of items) expect(parentOf(item)).toBe(parent!.spanContext().spanId);
    const children = byName(spans, 'run child');
    expect(children).toHaveLength(3);
    expect(children.map(parentOf).sort()).toEqual(items.map((s) => s.spanContext().spanId).sort());
    for (const child of children) expect(child.spanContext().traceId).toBe(parent!.spanContext().traceId);
  });

  it('ignores a malformed traceparent and starts a new trace', async () => {
    const engine = await tracedEngine();
    await engine.run('traced', { s: 'x' }, { traceparent: `ff-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    await engine.run('traced', { s: 'x' }, { traceparent: `00-${'0'.repeat(32)}-${CALLER_SPAN}-01` });
    // W3C Trace Context: uppercase hex is not a valid traceparent.
    await engine.run('traced', { s: 'x' }, { traceparent: TRACEPARENT.toUpperCase() });
    const runs = byName(exporter.getFinishedSpans(), 'run traced');
    expect(runs).toHaveLength(3);
    for (const run of runs) {
      expect(run.parentSpanContext).toBeUndefined();
      expect(run.spanContext().traceId).not.toBe(CALLER_TRACE);
    }
  });

  it('keeps a traceparent header the request step sets itself', async () => {
    const engine = new Engine({ security: { allowHosts: [origin] } });
    const own = `00-${'1'.repeat(32)}-${'2'.repeat(16)}-00`;
    await engine.workflows.create({
      name: 'own',
      steps: [
        {
          name: 'call',
          type: 'request',
          request_data: { url: `http://${origin}/`, headers: { TraceParent: own } },
        },
      ],
      wires: [],
    });
    expect((await engine.run('own', {}, { traceparent: TRACEPARENT })).status).toBe('succeeded');
    expect(received).toEqual([own]);
  });
});
