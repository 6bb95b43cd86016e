import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Engine, type RunEvent, type WorkflowInputBody } from '../../src/index.js';

let server: Server;
let origin: string;
/** Headers of every request the server got, in order. */
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
/** Answers 503 to this many requests of `/flaky` before answering 200. */
let failuresLeft = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers });
      if (req.url === '/flaky' && failuresLeft > 0) {
        failuresLeft -= 1;
        res.writeHead(503, { 'retry-after': '0' }).end('busy');
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ key: req.headers['idempotency-key'] ?? null }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
  failuresLeft = 0;
});

function call(
  requestData: { url: string } & Record<string, unknown>,
  retry?: { attempts: number; backoff_ms: number },
): WorkflowInputBody {
  return {
    name: 'call',
    steps: [{ name: 'notify', type: 'request', request_data: requestData, ...(retry ? { retry } : {}) }],
    wires: [],
    workflow_output: {
      name: 'output',
      output_data: { status: '{{notify.status}}', key: '{{notify.body.key}}' },
    },
  };
}

async function engineWith(workflow: WorkflowInputBody): Promise<Engine> {
  const engine = new Engine({ security: { allowHosts: [origin] } });
  await engine.workflows.create(workflow);
  return engine;
}

describe('request steps send the Idempotency-Key header', () => {
  it('sends <run id>:<step name> as Idempotency-Key', async () => {
    const engine = await engineWith(call({ url: `http://${origin}/hook`, method: 'POST', body: { a: 1 } }));
    const run = await engine.run('call', {});
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['idempotency-key']).toBe(`${run.id}:notify`);
    expect(run.output).toEqual({ status: 200, key: `${run.id}:notify` });
  });

  it('sends the same key on a retry after a 503', async () => {
    failuresLeft = 1;
    const engine = await engineWith(
      call({ url: `http://${origin}/flaky`, method: 'PUT', body: { a: 1 } }, { attempts: 3, backoff_ms: 1 }),
    );
    const run = await engine.run('call', {});
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.output).toMatchObject({ status: 200 });
    expect(seen.map((r) => r.headers['idempotency-key'])).toEqual([`${run.id}:notify`, `${run.id}:notify`]);
  });

  it("counts the request's own retries in the step's attempts, each with a step.retrying event", async () => {
    failuresLeft = 2;
    const engine = await engineWith(
      call({ url: `http://${origin}/flaky`, method: 'GET' }, { attempts: 3, backoff_ms: 1 }),
    );
    const events: RunEvent[] = [];
    const run = await engine.run('call', {}, { onEvent: (event) => events.push(event) });
    const retrying = events.filter((event) => event.type === 'step.retrying');
    expect(run.output).toMatchObject({ status: 200 });
    expect(seen).toHaveLength(3);
    expect(run.steps[0]!.attempts).toBe(3);
    expect(retrying).toEqual([
      expect.objectContaining({
        step: 'notify',
        attempt: 1,
        error: expect.objectContaining({ message: 'HTTP 503' }),
      }),
      expect.objectContaining({ step: 'notify', attempt: 2 }),
    ]);
  });

  it('gives two runs different keys', async () => {
    const engine = await engineWith(call({ url: `http://${origin}/hook` }));
    const first = await engine.run('call', {});
    const second = await engine.run('call', {});
    expect(seen.map((r) => r.headers['idempotency-key'])).toEqual([
      `${first.id}:notify`,
      `${second.id}:notify`,
    ]);
  });

  it('lets a header the step sets win, whatever its case', async () => {
    const engine = await engineWith(
      call({ url: `http://${origin}/hook`, method: 'POST', headers: { 'idempotency-KEY': 'order-42' } }),
    );
    const run = await engine.run('call', {});
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['idempotency-key']).toBe('order-42');
  });
});
