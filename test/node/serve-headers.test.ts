// The headers the handler reads under `serve`, which reads them from Node's raw list instead of
// copying them: repeated ones are joined as a `Request` joins them, names match in any case, and the
// client's address header is the socket's.
import { connect } from 'node:net';
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

/** Writes `text` on a fresh connection and reads the whole answer (the request asks to close). */
function exchange(text: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (out += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = out.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body });
    });
    socket.write(text);
  });
}

/** A read of the customers with `headerLines` (each ending in CRLF) and a JSON body. */
function read(headerLines: string) {
  const body = '{"page_size":1}';
  return exchange(
    `POST /catalog/entities/customers/read HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLines}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
}

async function engineWithCustomers(): Promise<Engine> {
  const engine = new Engine();
  await engine.catalog.registerEntity(customersEntity);
  return engine;
}

describe('serve: the headers the handler reads', () => {
  it('matches names in any case and joins a repeated header as a Request does', async () => {
    const handler = createHandler(await engineWithCustomers());
    server = await serve(handler);
    expect((await read('CONTENT-TYPE: application/json\r\n')).status).toBe(200);
    // Joined, two content types are no JSON media type: 415, as for the same Request in-process.
    const twice = await read('Content-Type: application/json\r\ncontent-type: application/json\r\n');
    expect(twice.status).toBe(415);
    const headers = new Headers();
    headers.append('content-type', 'application/json');
    headers.append('content-type', 'application/json');
    const direct = await handler(
      new Request('http://127.0.0.1/catalog/entities/customers/read', {
        method: 'POST',
        headers,
        body: '{"page_size":1}',
      }),
    );
    expect(direct.status).toBe(415);
    expect(JSON.parse(twice.body)).toEqual(await direct.json());
  });

  it('gives the hook the headers as sent, repeated ones joined, and the address of the socket', async () => {
    const seen: Record<string, string | null>[] = [];
    server = await serve(
      createHandler(await engineWithCustomers(), {
        auth: {
          principal: (request) => {
            const h = request.headers;
            seen.push({
              tag: h.get('x-tag'),
              cookie: h.get('cookie'),
              address: h.get('x-stepwire-client-address'),
            });
            return undefined;
          },
        },
      }),
    );
    const answer = await read(
      'Content-Type: application/json\r\nX-Tag: a\r\nx-tag: b\r\nCookie: a=1\r\nCookie: b=2\r\nX-Stepwire-Client-Address: 203.0.113.9\r\n',
    );
    expect(answer.status).toBe(200);
    expect(seen).toEqual([{ tag: 'a, b', cookie: 'a=1; b=2', address: '127.0.0.1' }]);
  });

  it('takes one bearer key, and refuses two, joined, as a key that is not one', async () => {
    const engine = new Engine({ access: { roles: { sales: { grants: ['entity.read:customers'] } } } });
    await engine.catalog.registerEntity(customersEntity);
    const key = await engine.keys.create({ name: 'bot', roles: ['sales'] });
    server = await serve(createHandler(engine));
    const once = await read(`Content-Type: application/json\r\nAuthorization: Bearer ${key.secret}\r\n`);
    expect(once.status).toBe(200);
    const twice = await read(
      `Content-Type: application/json\r\nAuthorization: Bearer ${key.secret}\r\nauthorization: Bearer ${key.secret}\r\n`,
    );
    expect(twice.status).toBe(401);
    expect(JSON.parse(twice.body)).toMatchObject({ status: 401, code: 'unauthorized' });
  });
});
