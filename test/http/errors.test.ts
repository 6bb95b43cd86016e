import { describe, expect, it, vi } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemoryStorage } from '../../src/index.js';
import { appEngine } from '../app/helpers.js';
import { customersEntity } from '../fixtures.js';
import { call } from './helpers.js';

const handler = createHandler(new Engine());

describe('routing errors', () => {
  it('answers 404 problem+json for an unknown path', async () => {
    const res = await call(handler, 'GET', '/nothing/here');
    expect(res.status).toBe(404);
    expect(res.response.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body).toEqual({
      type: 'urn:stepwire:problem:route_not_found',
      status: 404,
      title: 'Not Found',
      detail: expect.stringContaining('/nothing/here'),
      code: 'route_not_found',
      errors: [],
    });
  });

  it('answers 405 with Allow for a known path with another method', async () => {
    const res = await call(handler, 'PATCH', '/workflows/x');
    expect(res.status).toBe(405);
    expect(res.response.headers.get('allow')).toBe('DELETE, GET, HEAD, PUT');
    expect(res.body.code).toBe('method_not_allowed');
    expect((await call(handler, 'DELETE', '/catalog/entities')).response.headers.get('allow')).toBe(
      'GET, HEAD',
    );
    expect((await call(handler, 'HEAD', '/catalog/entity')).response.headers.get('allow')).toBe('POST');
  });

  it('answers HEAD as GET: same status and headers, no body', async () => {
    const { engine } = await appEngine();
    await engine.scripts.put('a.js', '// a');
    const seen: string[] = [];
    const head = createHandler(engine, { authorize: (_request, route) => void seen.push(route.method) });
    const statuses: number[] = [];
    for (const path of [
      '/catalog/entities',
      '/scripts/a.js',
      '/applications/shop/screens/orders?customer=7',
      '/workflows/nope',
      '/no/such/route',
    ]) {
      const get = await call(head, 'GET', path);
      const res = await call(head, 'HEAD', path);
      statuses.push(res.status);
      expect(res.status, path).toBe(get.status);
      expect([...res.response.headers], path).toEqual([...get.response.headers]);
      expect(res.response.body, path).toBeNull();
    }
    expect(statuses).toEqual([200, 200, 200, 404, 404]);
    // authorize is told the method as it came.
    expect(seen).toEqual(['GET', 'HEAD', 'GET', 'HEAD', 'GET', 'HEAD', 'GET', 'HEAD']);
  });

  it('answers 400 for a path segment that is not valid percent-encoding', async () => {
    const res = await call(handler, 'GET', '/workflows/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_path');
  });
});

describe('request bodies', () => {
  it('answers 415 when a JSON route gets another Content-Type, or a body without one', async () => {
    const res = await call(handler, 'POST', '/catalog/entity', JSON.stringify(customersEntity), {
      'content-type': 'text/plain',
    });
    expect(res.status).toBe(415);
    expect(res.response.headers.get('accept')).toBe('application/json');
    const none = await handler(
      new Request('http://localhost/catalog/entity', {
        method: 'POST',
        body: new Blob([JSON.stringify(customersEntity)]),
      }),
    );
    expect(none.status).toBe(415);
    const vendor = await call(handler, 'POST', '/catalog/entity', JSON.stringify(customersEntity), {
      'content-type': 'application/vnd.api+json; charset=utf-8',
    });
    expect(vendor.status).toBe(201);
  });

  it('answers 400 for malformed JSON, naming line and column', async () => {
    const res = await call(handler, 'POST', '/workflows', '{\n  "name": "x",\n  "steps": [,]\n}');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    expect(res.body.detail).toBe('The request body is not valid JSON: unexpected "," at line 3 column 13.');
    const cases: [string, string][] = [
      ['{"a": tru}', 'unexpected "t" at line 1 column 7'],
      ['{"a": 1', 'the body ends too early; expected "," or "}" at line 1 column 8'],
      ["{'a': 1}", 'unexpected "\'"; expected a property name in double quotes at line 1 column 2'],
      ['{"a": "x', 'a string is not closed at line 1 column 9'],
      ['{"a": "x\n"}', 'control character in a string at line 1 column 9'],
      ['[1] [2]', 'unexpected "[" after the JSON value at line 1 column 5'],
    ];
    for (const [text, detail] of cases) {
      expect((await call(handler, 'POST', '/workflows', text)).body.detail).toBe(
        `The request body is not valid JSON: ${detail}.`,
      );
    }
  });

  it('answers 400 for an empty body where one is needed', async () => {
    const res = await call(handler, 'POST', '/workflows', '');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('missing_body');
  });

  it('answers 400 for JSON nested deeper than maxJsonDepth, before parsing', async () => {
    const deep = '['.repeat(65) + ']'.repeat(65);
    const res = await call(handler, 'POST', '/workflows/x/runs', deep);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('too_deep');
    // Brackets inside strings do not count.
    const small = createHandler(new Engine(), { maxJsonDepth: 3 });
    const inString = await call(small, 'POST', '/catalog/entity', { name: '[[[[[[{{{{', columns: [] });
    expect(inString.status).toBe(400);
    expect(inString.body.code).toBe('validation_failed');
    const tooDeep = await call(small, 'POST', '/catalog/entity', { a: { b: { c: {} } } });
    expect(tooDeep.body.code).toBe('too_deep');
  });

  it('answers 413 past maxBodyBytes, by Content-Length or while streaming', async () => {
    const small = createHandler(new Engine(), { maxBodyBytes: 100 });
    const big = JSON.stringify({ ...customersEntity, description: 'x'.repeat(200) });
    const declared = await call(small, 'POST', '/catalog/entity', big);
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ code: 'limit_exceeded', status: 413 });
    expect(declared.body.detail).toContain('100 bytes');
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode('[1,2,3,4,5,6,7,8,9],'));
      },
    });
    const streamed = await small(
      new Request('http://localhost/workflows/x/runs', {
        method: 'POST',
        body: endless,
        headers: { 'content-type': 'application/json' },
        duplex: 'half',
      } as RequestInit),
    );
    expect(streamed.status).toBe(413);
    expect(pulled).toBeLessThan(20);
  });

  it('decodes gzip bodies and counts the decoded bytes', async () => {
    const engine = new Engine();
    const gz = async (text: string) =>
      new Uint8Array(
        await new Response(
          new Blob([text]).stream().pipeThrough(new CompressionStream('gzip')),
        ).arrayBuffer(),
      );
    const h = createHandler(engine, { maxBodyBytes: 2000 });
    const ok = await h(
      new Request('http://localhost/catalog/entity', {
        method: 'POST',
        body: await gz(JSON.stringify(customersEntity)),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      }),
    );
    expect(ok.status).toBe(201);
    const bomb = await gz(
      JSON.stringify({ ...customersEntity, name: 'b', description: 'x'.repeat(100_000) }),
    );
    expect(bomb.byteLength).toBeLessThan(2000);
    const refused = await h(
      new Request('http://localhost/catalog/entity', {
        method: 'POST',
        body: bomb,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      }),
    );
    expect(refused.status).toBe(413);
    const br = await h(
      new Request('http://localhost/catalog/entity', {
        method: 'POST',
        body: 'x',
        headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
      }),
    );
    expect(br.status).toBe(415);
    expect(br.headers.get('accept-encoding')).toBe('gzip, deflate');
  });
});

describe('unexpected errors', () => {
  it('answer 500 with a generic detail, no message or stack; onError sees the error', async () => {
    const storage = new MemoryStorage();
    storage.list = (async () => {
      throw new TypeError('secret internal detail at /srv/app.js:12');
    }) as unknown as typeof storage.list;
    const onError = vi.fn();
    const h = createHandler(new Engine({ storage }), { onError });
    const res = await call(h, 'GET', '/workflows');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      type: 'urn:stepwire:problem:internal_error',
      status: 500,
      title: 'Internal Server Error',
      detail: 'The server could not complete the request because of an unexpected error.',
      code: 'internal_error',
      errors: [],
    });
    expect(res.text).not.toContain('secret');
    expect(onError).toHaveBeenCalledWith(
      expect.objectContaining({ message: expect.stringContaining('secret') }),
      expect.any(Request),
    );
  });
});

describe('authorize and basePath', () => {
  it('false answers 403, a Response is sent as is, true or nothing lets the request through', async () => {
    const seen: unknown[] = [];
    const h = createHandler(new Engine(), {
      authorize: (request, route) => {
        seen.push(route);
        const key = request.headers.get('x-key');
        if (key === null)
          return new Response(null, { status: 401, headers: { 'www-authenticate': 'Bearer' } });
        if (key === 'reader') return route.method === 'GET';
        return undefined;
      },
    });
    const anonymous = await call(h, 'GET', '/workflows');
    expect(anonymous.status).toBe(401);
    expect(anonymous.response.headers.get('www-authenticate')).toBe('Bearer');
    const reader = await call(h, 'POST', '/catalog/entity', customersEntity, { 'x-key': 'reader' });
    expect(reader.status).toBe(403);
    expect(reader.body.code).toBe('forbidden');
    expect((await call(h, 'GET', '/workflows', undefined, { 'x-key': 'reader' })).status).toBe(200);
    expect((await call(h, 'POST', '/catalog/entity', customersEntity, { 'x-key': 'admin' })).status).toBe(
      201,
    );
    expect(seen[0]).toEqual({ method: 'GET', path: '/workflows', name: 'workflows.list', params: {} });
    await call(h, 'GET', '/catalog/entities/a%20b', undefined, { 'x-key': 'admin' });
    expect(seen.at(-1)).toEqual({
      method: 'GET',
      path: '/catalog/entities/a%20b',
      name: 'catalog.getEntityDefinition',
      params: { name: 'a b' },
    });
  });

  it('mounts under basePath; paths outside it are 404', async () => {
    const h = createHandler(new Engine(), { basePath: '/api/' });
    const created = await call(h, 'POST', '/api/catalog/entity', customersEntity);
    expect(created.status).toBe(201);
    expect(created.response.headers.get('location')).toBe('/api/catalog/entities/customers');
    expect((await call(h, 'GET', '/api/catalog/entities/customers')).status).toBe(200);
    expect((await call(h, 'GET', '/catalog/entities/customers')).status).toBe(404);
    expect((await call(h, 'GET', '/apix/catalog/entities')).status).toBe(404);
  });

  it('rejects bad options with a TypeError naming the option', () => {
    expect(() => createHandler(new Engine(), { maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
    expect(() => createHandler(new Engine(), { authorize: 'yes' as never })).toThrow(/authorize/);
  });
});
