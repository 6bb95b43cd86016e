import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { serve, type RunningServer } from '../../src/node/serve.js';
import { customersEntity } from '../fixtures.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Sends one request over a real connection and keeps the raw answer bytes' length. */
function send(
  method: string,
  path: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; bytes: number }> {
  const { hostname, port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method, path }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The headers that describe the answer (not the connection or the time it was sent). */
function described(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers;
  return rest;
}

describe('serve: HEAD answers', () => {
  it('carry the GET answer’s headers, Content-Length included, and no body', async () => {
    const engine = new Engine();
    await engine.catalog.registerEntity(customersEntity);
    await engine.scripts.put('double', 'writeEntity("x", getEntity("y"));');
    server = await serve(createHandler(engine));
    const paths = [
      '/catalog/entities',
      '/catalog/entities/customers',
      '/catalog/entities/nobody',
      '/scripts/double',
      '/openapi.json',
      '/no/such/route',
    ];
    for (const path of paths) {
      const get = await send('GET', path);
      const head = await send('HEAD', path);
      expect(get.headers['content-length'], path).toBe(String(get.bytes));
      expect(get.headers['transfer-encoding'], path).toBeUndefined();
      expect(head.status, path).toBe(get.status);
      expect(described(head.headers), path).toEqual(described(get.headers));
      expect(head.bytes, path).toBe(0);
    }
  });

  it('count bytes, not characters, of a non-ASCII answer', async () => {
    const engine = new Engine();
    await engine.catalog.registerEntity({ ...customersEntity, name: 'clients é 日本', description: 'ü' });
    server = await serve(createHandler(engine));
    const path = `/catalog/entities/${encodeURIComponent('clients é 日本')}`;
    const get = await send('GET', path);
    const head = await send('HEAD', path);
    expect(get.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(get.bytes);
    expect(head.bytes).toBe(0);
  });
});
