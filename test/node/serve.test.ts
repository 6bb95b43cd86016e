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

/** Sends one request with `target` as the request line's target, exactly as given. */
function send(
  method: string,
  target: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const { hostname, port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method, path: target }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('serve', () => {
  it('keeps the request target path as given, a leading // included', async () => {
    server = await serve((request) => new Response(new URL(request.url).pathname));
    expect((await send('GET', '//workflows/echo')).text).toBe('//workflows/echo');
    expect((await send('GET', '/catalog/entities?x=1')).text).toBe('/catalog/entities');
    server = (await server.close(), await serve(createHandler(new Engine())));
    const res = await send('GET', '//workflows/echo');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text).detail).toContain('There is no route //workflows/echo');
  });

  it('answers HEAD with the GET status and headers and no body', async () => {
    const engine = new Engine();
    await engine.catalog.registerEntity(customersEntity);
    server = await serve(createHandler(engine));
    const get = await send('GET', '/catalog/entities/customers');
    const head = await send('HEAD', '/catalog/entities/customers');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.text).toBe('');
    expect(JSON.parse(get.text).name).toBe('customers');
  });
});
