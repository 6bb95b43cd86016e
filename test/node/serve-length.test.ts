import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, type RunningServer } from '../../src/node/serve.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Sends one request; `onHeaders` runs when the answer's headers arrive, before its body. */
function send(
  method: string,
  path: string,
  onHeaders: () => void = () => {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const { hostname, port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, method, path }, (res) => {
      onHeaders();
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('serve: Content-Length of any handler’s answers', () => {
  it('sends a body made in memory with its Content-Length, and a HEAD gets the same headers and no body', async () => {
    // A handler that knows nothing of HEAD answers it as GET; serve leaves the body out.
    server = await serve(
      () =>
        new Response('héllo wörld', {
          status: 404,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
        }),
    );
    const get = await send('GET', '/files/x');
    const head = await send('HEAD', '/files/x');
    expect(get.status).toBe(404);
    expect(get.text).toBe('héllo wörld');
    expect(get.headers['content-length']).toBe('13');
    expect(get.headers['transfer-encoding']).toBeUndefined();
    expect(head.status).toBe(404);
    expect(head.headers['content-length']).toBe('13');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.text).toBe('');
  });

  it('sends an answer without a body with Content-Length 0, not chunked; a 204 with no length', async () => {
    server = await serve((request) =>
      request.url.endsWith('/gone')
        ? new Response(null, { status: 204 })
        : new Response(null, { status: 303, headers: { location: '/next' } }),
    );
    const redirect = await send('POST', '/form');
    expect([
      redirect.status,
      redirect.headers['content-length'],
      redirect.headers['transfer-encoding'],
    ]).toEqual([303, '0', undefined]);
    const gone = await send('DELETE', '/gone');
    expect([gone.status, gone.headers['content-length'], gone.headers['transfer-encoding']]).toEqual([
      204,
      undefined,
      undefined,
    ]);
  });

  it('still streams a body that is not whole: headers first, chunked, nothing held back', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    server = await serve(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            async start(controller) {
              controller.enqueue(new TextEncoder().encode('first '));
              await released;
              controller.enqueue(new TextEncoder().encode('second'));
              controller.close();
            },
          }),
        ),
    );
    // The second chunk waits for the headers to reach the client: buffering would hang here.
    const res = await send('GET', '/stream', release);
    expect(res.text).toBe('first second');
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-length']).toBeUndefined();
  });

  it('keeps a Content-Length the handler set, and an empty body says 0', async () => {
    server = await serve((request) =>
      new URL(request.url).pathname === '/empty'
        ? new Response('')
        : new Response('abc', { headers: { 'content-length': '3' } }),
    );
    expect((await send('GET', '/set')).headers['content-length']).toBe('3');
    const empty = await send('GET', '/empty');
    expect([empty.headers['content-length'], empty.text]).toEqual(['0', '']);
  });

  it('answers a HEAD at once even when the GET body never ends', async () => {
    let cancelled = false;
    server = await serve(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            pull: (controller) =>
              new Promise((resolve) => setTimeout(resolve, 20)).then(() =>
                controller.enqueue(new Uint8Array(1)),
              ),
            cancel: () => void (cancelled = true),
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
    );
    const head = await send('HEAD', '/events');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/event-stream');
    expect(head.text).toBe('');
    await expect.poll(() => cancelled).toBe(true);
  }, 10_000);
});
