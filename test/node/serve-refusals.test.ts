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

interface Exchange {
  /** Every status line the server sent, in order. */
  statuses: number[];
  head: string;
  body: string;
  /** Milliseconds from the first write until the server closed the connection. */
  closedAfter: number;
}

/**
 * Writes each part on one fresh connection (a part that is a number waits that many ms; `'answer'`
 * waits for the first bytes of an answer) and reads everything until the server closes.
 */
function exchange(...parts: (string | number)[]): Promise<Exchange> {
  const { port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const started = Date.now();
    let out = '';
    let answered: () => void = () => {};
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      out += chunk;
      answered();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = out.split('\r\n\r\n');
      resolve({
        statuses: [...out.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1])),
        head: head.toLowerCase(),
        body: rest.join('\r\n\r\n'),
        closedAfter: Date.now() - started,
      });
    });
    void (async () => {
      for (const part of parts) {
        if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
        else if (part === 'answer') await new Promise<void>((r) => (out ? r() : (answered = r)));
        else if (!socket.destroyed) socket.write(part);
      }
    })();
  });
}

const chunkedHead = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;

describe('serve: CONNECT and malformed chunked bodies get an answer', () => {
  it('answers CONNECT with 501 problem+json and closes, also when tunnel bytes follow at once', async () => {
    server = await serve(createHandler(new Engine()));
    const connectHead = 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n';
    for (const text of [
      connectHead,
      connectHead + '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'.repeat(50),
    ]) {
      const res = await exchange(text);
      expect(res.statuses).toEqual([501]);
      expect(res.head).toContain('content-type: application/problem+json');
      expect(res.head).toContain(`content-length: ${Buffer.byteLength(res.body)}`);
      expect(res.head).toContain('connection: close');
      expect(JSON.parse(res.body)).toMatchObject({
        status: 501,
        code: 'method_not_implemented',
        detail: 'CONNECT is not supported.',
        errors: [],
      });
    }
    // The server still answers.
    expect(
      (await exchange('GET /workflows HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n')).statuses,
    ).toEqual([200]);
  });

  it('answers a malformed chunk size with one 400 problem+json, whether it comes with the head or later', async () => {
    server = await serve(createHandler(new Engine()));
    for (const parts of [
      [chunkedHead('/workflows') + 'zz\r\n'],
      [chunkedHead('/workflows') + '1\r\n{\r\n', 50, 'zz\r\n'],
    ]) {
      const res = await exchange(...parts);
      expect(res.statuses, String(parts[0])).toEqual([400]);
      expect(res.head).toContain('content-type: application/problem+json');
      expect(res.head).toContain(`content-length: ${Buffer.byteLength(res.body)}`);
      expect(res.head).toContain('connection: close');
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, code: 'malformed_request', errors: [] });
    }
    // Nothing was stored from the half body, and the server still answers.
    const list = await exchange('GET /workflows HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(list.statuses).toEqual([200]);
    expect(JSON.parse(list.body)).toEqual([]);
  });

  it('a handler reading the body sees its signal abort, and its own answer is never sent after the 400', async () => {
    let aborted: Promise<boolean> | undefined;
    let handlerDone: (() => void) | undefined;
    const finished = new Promise<void>((resolve) => (handlerDone = resolve));
    server = await serve(async (request) => {
      aborted = new Promise((resolve) => request.signal.addEventListener('abort', () => resolve(true)));
      try {
        return new Response(`read ${(await request.text()).length}`);
      } catch {
        return new Response('the body failed', { status: 499 });
      } finally {
        setTimeout(handlerDone!, 20);
      }
    });
    const res = await exchange(chunkedHead('/x') + '2\r\n{}\r\n', 50, 'zz\r\n');
    expect(res.statuses).toEqual([400]);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'malformed_request' });
    expect(await aborted).toBe(true);
    await finished;
  });

  it('a malformed chunk after the handler answered without reading the body: that answer alone, then the connection closes', async () => {
    server = await serve(createHandler(new Engine()));
    // POST /nope is a 404 answered before the body is read; the body then turns out malformed.
    const res = await exchange(chunkedHead('/nope') + '2\r\n{}\r\n', 'answer', 'zz\r\n');
    expect(res.statuses).toEqual([404]);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'route_not_found' });
    expect(res.closedAfter).toBeLessThan(5_000);
  });
});

describe('serve arguments', () => {
  it('refuses a port that is no port and a handler that is no function, naming them', async () => {
    const handler = () => new Response('ok');
    for (const port of ['abc', -1, 65_536, 1.5, Number.NaN]) {
      await expect(serve(handler, { port: port as number })).rejects.toThrow(
        /^serve options\.port must be a whole number from 0 to 65535, got /,
      );
    }
    await expect(serve(null as never)).rejects.toThrow(TypeError);
    expect(() => createHandler(null as never)).toThrow('createHandler needs an Engine');
  });
});
