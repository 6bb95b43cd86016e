import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type WorkflowInputBody } from '../../src/index.js';

let server: Server;
let origin: string;
const seen: { method: string; url: string; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true, path: req.url, received: body ? JSON.parse(body) : null }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function workflow(url: string): WorkflowInputBody {
  return {
    name: 'call',
    steps: [
      {
        name: 'post',
        type: 'request',
        request_data: {
          url,
          method: 'post',
          path_params: { id: '{{input.id}}' },
          query_params: { q: 'a b' },
          headers: { 'x-test': 'yes' },
          body: { id: '{{input.id}}' },
        },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { id: { type: 'integer' } } },
    },
    workflow_output: {
      name: 'output',
      output_data: { status: '{{post.status}}', echoed: '{{post.body.received.id}}' },
    },
  };
}

describe('request steps in a workflow', () => {
  it('calls an allowed local server with path and query params and a JSON body', async () => {
    const engine = new Engine({ security: { allowHosts: [origin] } });
    await engine.workflows.create(workflow(`http://${origin}/items/{id}`));
    const run = await engine.run('call', { id: 7 });
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.output).toEqual({ status: 200, echoed: 7 });
    expect(seen.at(-1)).toEqual({ method: 'POST', url: '/items/7?q=a+b', body: '{"id":7}' });
  });

  it('refuses loopback, private and link-local destinations unless allowed, without connecting', async () => {
    let calls = 0;
    const fetchSpy: typeof fetch = async () => {
      calls += 1;
      return new Response('{}');
    };
    for (const url of [
      `http://${origin}/x`,
      'http://10.0.0.8/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x',
      'http://localhost/x',
    ]) {
      const engine = new Engine({ fetch: fetchSpy });
      await engine.workflows.create(workflow(url));
      const run = await engine.run('call', { id: 1 });
      expect(run.status).toBe('failed');
      expect(run.error?.code).toBe('request_refused');
      expect(run.error?.message).toMatch(/allowHosts/);
    }
    expect(calls).toBe(0);
  });

  it('refuses a malformed allowHosts entry when the engine is made, naming it', () => {
    for (const [entries, index] of [
      [['api.example.com', '127.0.0.1:99999'], 1],
      [['[::1]:65536'], 0],
      [['http://127.0.0.1'], 0],
    ] as const) {
      expect(() => new Engine({ security: { allowHosts: entries } })).toThrow(
        new RegExp(
          `security\\.allowHosts\\[${index}\\] \\("${entries[index]!.replace(/[[\]]/g, '\\$&')}"\\)`,
        ),
      );
    }
    expect(() => new Engine({ security: { allowHosts: ['127.0.0.1:65535', '[::1]:0'] } })).not.toThrow();
  });
});
