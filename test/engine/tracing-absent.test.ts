import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../src/index.js';

// As if @opentelemetry/api were not installed: importing it fails the way a missing package does.
vi.mock('@opentelemetry/api', () => {
  throw Object.assign(new Error("Cannot find package '@opentelemetry/api'"), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
});

let server: Server;
let origin: string;
const received: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(req.headers['traceparent'] as string | undefined);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('without @opentelemetry/api', () => {
  it('runs as usual, records no trace and sends no traceparent', async () => {
    const engine = new Engine({ security: { allowHosts: [origin] } });
    await engine.workflows.create({
      name: 'plain',
      steps: [{ name: 'call', type: 'request', request_data: { url: `http://${origin}/` } }],
      wires: [],
    });
    const traceparent = `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`;
    const record = await engine.run('plain', {}, { traceparent });
    expect(record.status).toBe('succeeded');
    expect(record).not.toHaveProperty('traceparent');
    expect(received).toEqual([undefined]);
  });
});
