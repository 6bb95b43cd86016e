import { Validator } from '@seriousme/openapi-schema-validator';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { ROUTE_LIST } from '../../src/http/routes.js';
import { Engine } from '../../src/index.js';
import { serve, type RunningServer } from '../../src/node/serve.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Sends one request with the target exactly as written, on a fresh connection, and reads the answer. */
function send(method: string, target: string): Promise<{ status: number; type: string; body: string }> {
  const { port } = new URL(server!.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (out += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = out.split('\r\n\r\n');
      const type = /^content-type: *(.*)$/im.exec(head)?.[1] ?? '';
      resolve({ status: Number(head.split(' ')[1]), type: type.trim(), body });
    });
    const length = method === 'POST' || method === 'PUT' ? 'Content-Length: 0\r\n' : '';
    socket.write(`${method} ${target} HTTP/1.1\r\nHost: localhost\r\n${length}Connection: close\r\n\r\n`);
  });
}

describe('/openapi.json documents the 400 of a path that is not valid percent-encoding', () => {
  it('lists 400 problem+json on every route with path parameters, which such a path gets', async () => {
    server = await serve(createHandler(new Engine()));
    const doc = JSON.parse((await send('GET', '/openapi.json')).body);
    const withParams = ROUTE_LIST.filter((route) => route.path.includes('{'));
    expect(withParams.length).toBeGreaterThan(10);
    for (const route of withParams) {
      const label = `${route.method} ${route.path}`;
      // Each parameter in turn is a truncated UTF-8 sequence, the others plain names.
      const names = [...route.path.matchAll(/\{[^}]+\}/g)].map((m) => m[0]);
      for (const bad of names) {
        const target = names.reduce(
          (path, name) => path.replace(name, name === bad ? '%E0%A4%A' : 'x'),
          route.path,
        );
        const res = await send(route.method, target);
        expect(res.status, `${label} as ${target}`).toBe(400);
        expect(res.type, label).toBe('application/problem+json');
        expect(JSON.parse(res.body), label).toMatchObject({ status: 400, code: 'invalid_path' });
      }
      let documented = doc.paths[route.path][route.method.toLowerCase()].responses['400'];
      expect(documented, label).toBeDefined();
      if (documented.$ref) documented = doc.components.responses[documented.$ref.split('/').pop()];
      expect(documented.content['application/problem+json'].schema.$ref, label).toBe(
        '#/components/schemas/Problem',
      );
    }
    expect(doc.components.responses.Problem400.description).toContain('invalid_path');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });
});
