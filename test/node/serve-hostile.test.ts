import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { serve, type RunningServer } from '../../src/node/serve.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Writes `text` on a fresh connection and reads the whole answer (the request asks to close). */
function exchange(text: string): Promise<{ status: number; head: string; body: string }> {
  const { port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (out += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = out.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head: head.toLowerCase(), body });
    });
    socket.write(text);
  });
}

const get = (path: string, headerLines: string) =>
  exchange(`GET ${path} HTTP/1.1\r\n${headerLines}Connection: close\r\n\r\n`);

describe('serve: requests the handler cannot be given', () => {
  it('answers 400 problem+json to a Host header that is not a host, whatever it would do to the URL', async () => {
    const seen: string[] = [];
    server = await serve((request) => {
      seen.push(request.url);
      return new Response('ok');
    });
    for (const host of [
      'a b',
      '[::1',
      'user@evil.example',
      'evil.example/x',
      'evil.example?',
      'evil.example#',
    ]) {
      const res = await get('/workflows', `Host: ${host}\r\n`);
      expect(res.status, host).toBe(400);
      expect(res.head, host).toContain('content-type: application/problem+json');
      expect(JSON.parse(res.body), host).toMatchObject({ status: 400, code: 'invalid_host', errors: [] });
    }
    const twice = await get('/workflows', 'Host: a.example\r\nHost: b.example\r\n');
    expect(twice.status).toBe(400);
    expect(seen).toEqual([]);
    // Hosts that are hosts go through, the path untouched.
    for (const host of ['localhost:8787', '127.0.0.1', '[::1]:80', 'my_service.internal']) {
      expect((await get('/workflows?x=1', `Host: ${host}\r\n`)).status, host).toBe(200);
    }
    expect(seen.map((url) => new URL(url).pathname + new URL(url).search)).toEqual(
      Array(4).fill('/workflows?x=1'),
    );
  });

  it('answers an HTTP/1.1 request without Host (400) and an Expect it cannot meet (417) with problem details', async () => {
    server = await serve(createHandler(new Engine()));
    const noHost = await exchange('GET /workflows HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(noHost.status).toBe(400);
    expect(noHost.head).toContain('content-type: application/problem+json');
    expect(JSON.parse(noHost.body)).toMatchObject({
      code: 'invalid_host',
      detail: 'The request has no Host header.',
    });
    const expectation = await get('/workflows', 'Host: localhost\r\nExpect: 200-ok\r\n');
    expect(expectation.status).toBe(417);
    expect(JSON.parse(expectation.body)).toMatchObject({ status: 417, code: 'expectation_failed' });
    // HTTP/1.0 has no Host requirement.
    expect((await exchange('GET /workflows HTTP/1.0\r\n\r\n')).status).toBe(200);
  });

  it('answers TRACE, which fetch cannot carry, with 501 problem+json instead of failing', async () => {
    server = await serve(createHandler(new Engine()));
    const res = await exchange('TRACE /workflows HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(501);
    expect(JSON.parse(res.body)).toMatchObject({ status: 501, code: 'method_not_implemented' });
    // The server still answers.
    expect((await get('/workflows', 'Host: localhost\r\n')).status).toBe(200);
  });

  it('answers a handler that throws with a 500 problem carrying Content-Length', async () => {
    server = await serve(() => {
      throw new Error('secret internals');
    });
    const res = await get('/', 'Host: localhost\r\n');
    expect(res.status).toBe(500);
    expect(res.head).toContain(`content-length: ${res.body.length}`);
    expect(res.body).not.toContain('secret');
    expect(JSON.parse(res.body)).toMatchObject({ status: 500, code: 'internal_error' });
  });

  it('answers what Node cannot parse with problem details too: 400 malformed, 431 for a huge head', async () => {
    server = await serve(createHandler(new Engine()));
    for (const [text, status, code] of [
      ['FOO /workflows HTTP/1.1\r\nHost: localhost\r\n\r\n', 400, 'malformed_request'],
      ['GET /workflows HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n', 400, 'malformed_request'],
      [
        `GET /workflows HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'headers_too_large',
      ],
    ] as const) {
      const res = await exchange(text);
      expect(res.status, text.slice(0, 20)).toBe(status);
      expect(res.head).toContain('content-type: application/problem+json');
      expect(res.head).toContain(`content-length: ${Buffer.byteLength(res.body)}`);
      expect(JSON.parse(res.body)).toMatchObject({ status, code, errors: [] });
    }
    expect((await get('/workflows', 'Host: localhost\r\n')).status).toBe(200);
  });

  it('a client sending a large body before reading gets the refusal, not a reset; the connection is reused', async () => {
    server = await serve(createHandler(new Engine()));
    const { port } = new URL(server.url);
    // Like Python's http.client: the whole request is written, then the answers are read, on one connection.
    const body = ' '.repeat(8_000_000);
    const request = (path: string, type: string, size: number) =>
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${size}\r\n\r\n`;
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let out = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        out += chunk;
        if (out.split('HTTP/1.1 ').length - 1 === 4) socket.end();
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(out));
      socket.write(request('/workflows/x/runs', 'application/json', body.length) + body);
      socket.write(request('/nope', 'application/json', body.length) + body);
      socket.write(request('/workflows', 'text/plain', 9) + 'not json!');
      socket.write('GET /workflows HTTP/1.1\r\nHost: localhost\r\n\r\n');
    });
    expect([...answers.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))).toEqual([
      413, 404, 415, 200,
    ]);
  }, 30_000);
});
