import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError, LimitError, RequestRefusedError, UpstreamError } from '../../src/errors/index.js';
import { performRequest } from '../../src/request/index.js';
import { options, recordingFetch, startServer, type TestServer } from './helpers.js';

let server: TestServer;
let other: TestServer;
let bigWritten = 0;
let bigFinished = false;
let bigClosed: Promise<void> = Promise.resolve();
const counters: Record<string, number> = {};
const count = (name: string): number => (counters[name] = (counters[name] ?? 0) + 1);

beforeAll(async () => {
  other = await startServer({
    '/echo': (_req, res, seen) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen)),
  });
  server = await startServer({
    '/echo': (_req, res, seen) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen)),
    '/items/a%20b%2Fc/parts/7': (_req, res, seen) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen)),
    '/json': (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-one': '1' })
        .end('{"ok":true,"n":[1,2]}'),
    '/problem': (_req, res) =>
      res.writeHead(422, { 'content-type': 'application/problem+json' }).end('{"title":"bad"}'),
    '/text': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>héllo</p>'),
    '/bad-json': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('<html>'),
    '/stall': () => undefined,
    '/drip': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(timer));
    },
    '/big': async (_req, res) => {
      bigWritten = 0;
      bigFinished = false;
      bigClosed = new Promise((resolve) => res.on('close', () => resolve()));
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = new Uint8Array(64 * 1024).fill(97);
      while (bigWritten < 10 * 1024 * 1024 && !res.destroyed) {
        bigWritten += chunk.byteLength;
        if (!res.write(chunk)) {
          await new Promise<void>((resolve) => {
            const done = (): void => {
              res.off('drain', done);
              res.off('close', done);
              resolve();
            };
            res.on('drain', done);
            res.on('close', done);
          });
        }
      }
      if (!res.destroyed) {
        bigFinished = true;
        res.end();
      }
    },
    '/big-declared': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(10 * 1024 * 1024) });
      res.write('x'.repeat(1024));
    },
    '/redirect': (_req, res) => res.writeHead(302, { location: '/json' }).end(),
    '/to-metadata': (_req, res) =>
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/to-private': (_req, res) => res.writeHead(307, { location: 'http://10.0.0.1/admin' }).end(),
    '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
    '/see-other': (_req, res) => res.writeHead(303, { location: '/echo' }).end(),
    '/to-other': (_req, res) => res.writeHead(302, { location: `${other.origin}/echo` }).end(),
    '/to-same': (_req, res) => res.writeHead(302, { location: '/echo' }).end(),
    '/busy-then-ok': (_req, res) => {
      if (count('busy-then-ok') === 1) res.writeHead(503, { 'retry-after': '1' }).end('busy');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    },
    '/busy-decimal': (_req, res) => {
      if (count('busy-decimal') === 1) res.writeHead(503, { 'retry-after': '1.5' }).end('busy');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    },
    '/busy-long': (_req, res) => {
      if (count('busy-long') === 1) res.writeHead(503, { 'retry-after': '120' }).end('busy');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    },
    '/busy-wait': (_req, res) => {
      count('busy-wait');
      res.writeHead(503, { 'retry-after': '5' }).end('busy');
    },
    '/always-503': (_req, res) => {
      count('always-503');
      res.writeHead(503).end('down');
    },
    '/post-503': (_req, res) => {
      count('post-503');
      res.writeHead(503).end('down');
    },
    '/bad-request': (_req, res) => {
      count('bad-request');
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"bad"}');
    },
  });
});

afterAll(async () => {
  await server.close();
  await other.close();
});

const allowed = (): string[] => [server.host, other.host];
const opts = (extra: Partial<Parameters<typeof options>[0]> = {}) =>
  options({ fetch: globalThis.fetch, allowHosts: allowed(), ...extra });

describe('sending', () => {
  it('fills path params (encoded) and appends query params, arrays repeating the key', async () => {
    const out = await performRequest(
      {
        url: `${server.origin}/items/{id}/parts/:part`,
        path_params: { id: 'a b/c', part: 7 },
        query_params: { tag: ['x', 'y'], q: 'hi&there', skipped: null },
      },
      opts(),
    );
    expect(out.status).toBe(200);
    expect((out.body as { url: string; method: string }).url).toBe(
      '/items/a%20b%2Fc/parts/7?tag=x&tag=y&q=hi%26there',
    );
    expect((out.body as { method: string }).method).toBe('GET');
  });

  it('POSTs a JSON body with its headers', async () => {
    const out = await performRequest(
      {
        url: `${server.origin}/echo`,
        method: 'post',
        headers: { 'X-Trace': 'abc' },
        body: { a: 1, b: ['x'] },
      },
      opts(),
    );
    const seen = out.body as { method: string; headers: Record<string, string>; body: string };
    expect(seen.method).toBe('POST');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['x-trace']).toBe('abc');
    expect(JSON.parse(seen.body)).toEqual({ a: 1, b: ['x'] });
  });

  it('sends a string body as text/plain, or with the content-type given', async () => {
    const plain = await performRequest(
      { url: `${server.origin}/echo`, method: 'PUT', body: 'hello' },
      opts(),
    );
    expect((plain.body as { headers: Record<string, string> }).headers['content-type']).toBe(
      'text/plain; charset=utf-8',
    );
    expect((plain.body as { body: string }).body).toBe('hello');
    const csv = await performRequest(
      {
        url: `${server.origin}/echo`,
        method: 'POST',
        headers: { 'Content-Type': 'text/csv' },
        body: 'a,b\n1,2',
      },
      opts(),
    );
    expect((csv.body as { headers: Record<string, string> }).headers['content-type']).toBe('text/csv');
    expect((csv.body as { body: string }).body).toBe('a,b\n1,2');
  });
});

describe('answers', () => {
  it('parses JSON bodies (also +json) and keeps other bodies as text', async () => {
    const json = await performRequest({ url: `${server.origin}/json` }, opts());
    expect(json).toMatchObject({ status: 200, body: { ok: true, n: [1, 2] } });
    expect(json.headers['x-one']).toBe('1');
    const problem = await performRequest({ url: `${server.origin}/problem` }, opts());
    expect(problem).toMatchObject({ status: 422, body: { title: 'bad' } });
    const text = await performRequest({ url: `${server.origin}/text` }, opts());
    expect(text.body).toBe('<p>héllo</p>');
  });

  it('returns a 404 as an output with its status, not as an error', async () => {
    const out = await performRequest({ url: `${server.origin}/nothing-here` }, opts());
    expect(out.status).toBe(404);
    expect(out.body).toBe('no route');
  });

  it('fails with an UpstreamError when a JSON answer is not JSON', async () => {
    const error = await performRequest({ url: `${server.origin}/bad-json` }, opts()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(200);
  });
});

describe('limits', () => {
  it('stops waiting for headers after timeouts.headersMs', async () => {
    const started = Date.now();
    const error = await performRequest(
      { url: `${server.origin}/stall` },
      opts({ timeouts: { headersMs: 200, totalMs: 10_000 } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('request.timeout.headers');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('stops a body that never ends after timeouts.totalMs', async () => {
    const started = Date.now();
    const error = await performRequest(
      { url: `${server.origin}/drip` },
      opts({ timeouts: { headersMs: 5_000, totalMs: 400 } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('request.timeout.total');
    expect((error as LimitError).message).toContain('400 ms');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('stops reading at maxResponseBytes without reading the whole 10 MB', async () => {
    let pulled = 0;
    const countingFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await globalThis.fetch(input, init);
      const reader = response.body!.getReader();
      const counted = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else {
            pulled += value.byteLength;
            controller.enqueue(value);
          }
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(counted, { status: response.status, headers: response.headers });
    }) as typeof fetch;
    const error = await performRequest(
      { url: `${server.origin}/big` },
      opts({ fetch: countingFetch, maxResponseBytes: 256 * 1024 }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('request.maxResponseBytes');
    await bigClosed;
    expect(bigFinished).toBe(false);
    expect(pulled).toBeLessThan(1024 * 1024);
    expect(bigWritten).toBeLessThan(10 * 1024 * 1024);
  });

  it('refuses a body whose declared length is over the cap before reading it', async () => {
    const error = await performRequest(
      { url: `${server.origin}/big-declared` },
      opts({ maxResponseBytes: 1024 }),
    ).catch((e: unknown) => e);
    expect((error as LimitError).limit).toBe('request.maxResponseBytes');
  });
});

describe('redirects', () => {
  it('follows an allowed redirect', async () => {
    const rec = recordingFetch();
    const out = await performRequest({ url: `${server.origin}/redirect` }, opts({ fetch: rec.fetch }));
    expect(out).toMatchObject({ status: 200, body: { ok: true } });
    expect(rec.urls).toEqual([`${server.origin}/redirect`, `${server.origin}/json`]);
  });

  it.each([
    ['/to-metadata', '169.254.169.254'],
    ['/to-private', '10.0.0.1'],
  ])('refuses a redirect from %s to %s before connecting', async (path, host) => {
    const rec = recordingFetch();
    const error = await performRequest({ url: `${server.origin}${path}` }, opts({ fetch: rec.fetch })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RequestRefusedError);
    expect((error as Error).message).toContain(host);
    expect((error as Error).message).toContain('security.allowHosts');
    expect(rec.urls).toEqual([`${server.origin}${path}`]);
  });

  it('stops after maxRedirects', async () => {
    const rec = recordingFetch();
    const error = await performRequest(
      { url: `${server.origin}/loop` },
      opts({ fetch: rec.fetch, maxRedirects: 3 }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('request.maxRedirects');
    expect(rec.urls).toHaveLength(4);
  });

  it('turns a POST into a GET without body on 303', async () => {
    const out = await performRequest(
      { url: `${server.origin}/see-other`, method: 'POST', body: { a: 1 } },
      opts(),
    );
    expect(out.body).toMatchObject({ method: 'GET', body: '' });
    expect((out.body as { headers: Record<string, string> }).headers['content-type']).toBeUndefined();
  });

  it('drops Authorization when a redirect leaves the origin, keeps it on the same origin', async () => {
    const headers = { Authorization: 'Bearer secret' };
    const cross = await performRequest({ url: `${server.origin}/to-other`, headers }, opts());
    expect((cross.body as { headers: Record<string, string> }).headers['authorization']).toBeUndefined();
    const same = await performRequest({ url: `${server.origin}/to-same`, headers }, opts());
    expect((same.body as { headers: Record<string, string> }).headers['authorization']).toBe('Bearer secret');
  });
});

describe('retries', () => {
  const retry = { attempts: 3, baseMs: 10, capMs: 5_000 };

  it('retries a GET on 503 after its Retry-After', async () => {
    const started = Date.now();
    const out = await performRequest({ url: `${server.origin}/busy-then-ok` }, opts({ retry }));
    expect(out).toMatchObject({ status: 200, body: 'ok' });
    expect(counters['busy-then-ok']).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('reads a decimal Retry-After as seconds, not as a date in the past', async () => {
    const started = Date.now();
    const out = await performRequest({ url: `${server.origin}/busy-decimal` }, opts({ retry }));
    expect(out).toMatchObject({ status: 200, body: 'ok' });
    expect(counters['busy-decimal']).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  });

  it('waits no longer than capMs however long Retry-After is', async () => {
    const started = Date.now();
    const out = await performRequest(
      { url: `${server.origin}/busy-long` },
      opts({ retry: { ...retry, capMs: 100 } }),
    );
    expect(out.status).toBe(200);
    expect(counters['busy-long']).toBe(2);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('gives the last answer as output once attempts are used up', async () => {
    const out = await performRequest({ url: `${server.origin}/always-503` }, opts({ retry }));
    expect(out.status).toBe(503);
    expect(counters['always-503']).toBe(3);
  });

  it('never retries a POST', async () => {
    const out = await performRequest(
      { url: `${server.origin}/post-503`, method: 'POST', body: 'x' },
      opts({ retry }),
    );
    expect(out.status).toBe(503);
    expect(counters['post-503']).toBe(1);
  });

  it('never retries a 400', async () => {
    const out = await performRequest({ url: `${server.origin}/bad-request` }, opts({ retry }));
    expect(out).toMatchObject({ status: 400, body: { error: 'bad' } });
    expect(counters['bad-request']).toBe(1);
  });

  it('retries a GET on a network error, then fails with a retryable UpstreamError', async () => {
    const gone = await startServer({});
    await gone.close();
    const rec = recordingFetch();
    const error = await performRequest(
      { url: `${gone.origin}/x` },
      opts({ fetch: rec.fetch, allowHosts: [gone.host], retry }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).retryable).toBe(true);
    expect(rec.urls).toHaveLength(3);
  });
});

describe('cancelling', () => {
  it('fails with CancelledError when the signal aborts while waiting', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await performRequest(
      { url: `${server.origin}/stall` },
      opts({ signal: controller.signal }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledError);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('fails with CancelledError when the signal aborts during a retry wait', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const error = await performRequest(
      { url: `${server.origin}/busy-wait` },
      opts({ signal: controller.signal, retry: { attempts: 3, baseMs: 10, capMs: 10_000 } }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledError);
    expect(counters['busy-wait']).toBe(1);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const rec = recordingFetch();
    const error = await performRequest(
      { url: `${server.origin}/json` },
      opts({ fetch: rec.fetch, signal: AbortSignal.abort() }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledError);
    expect(rec.urls).toHaveLength(0);
  });
});
