import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpProblemError, createClient, createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { serve, type RunningServer } from '../../src/node/serve.js';

let server: RunningServer | undefined;
let other: Server | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await new Promise((resolve) => (other ? other.close(resolve) : resolve(undefined)));
  other = undefined;
});

describe('createClient errors from answers that are not problem details', () => {
  it('a screen’s HTML 404 reads as its words, not its markup', async () => {
    server = await serve(createHandler(new Engine()));
    const client = createClient({ baseUrl: server.url, retry: 0 });
    const error = (await client.renderScreen('nope', 'start').catch((e: unknown) => e)) as HttpProblemError;
    expect(error).toBeInstanceOf(HttpProblemError);
    expect(error.status).toBe(404);
    expect(error.problem.detail).toBe('Not found application "nope" does not exist');
    expect(error.message).toBe('404 Not Found: Not found application "nope" does not exist');
  });

  it('a proxy’s HTML error page and a plain-text answer keep their text', async () => {
    other = createServer((req, res) => {
      if (req.url === '/workflows/html') {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end(
          '<html><head><title>x</title><style>p{}</style></head><body><h1>Bad &amp; gone</h1><p>upstream &#8220;api&#8221; down</p></body></html>',
        );
      } else {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('  starting <soon>  \n');
      }
    });
    await new Promise<void>((resolve) => other!.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as AddressInfo;
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, retry: 0 });
    const html = (await client.getWorkflow('html').catch((e: unknown) => e)) as HttpProblemError;
    expect([html.status, html.code, html.problem.detail]).toEqual([
      502,
      'http_502',
      'Bad & gone upstream “api” down',
    ]);
    const text = (await client.getWorkflow('text').catch((e: unknown) => e)) as HttpProblemError;
    expect([text.status, text.problem.detail]).toEqual([503, 'starting <soon>']);
  });
});

describe('createClient refuses options it could only fail with later', () => {
  it('names a baseUrl that is no http or https URL, and timeouts or retries out of range', () => {
    expect(() => createClient({ baseUrl: 'nope' })).toThrow(
      'createClient: baseUrl must be an http or https URL such as "http://127.0.0.1:8080/", not a URL (got "nope")',
    );
    expect(() => createClient({ baseUrl: 'file:///tmp/api' })).toThrow(/baseUrl .*not file:/);
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', timeout: -1 })).toThrow(
      /^createClient: timeout must be a number of ms from 1 to 2147483647, or false for none \(got -1\)$/,
    );
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', runTimeout: Number.NaN })).toThrow(
      /runTimeout/,
    );
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', retry: 1.5 })).toThrow(
      /retry must be a whole number/,
    );
    expect(() => createClient({ baseUrl: new URL('http://127.0.0.1:1/api'), timeout: false })).not.toThrow();
  });
});
