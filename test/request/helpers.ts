import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestOptions } from '../../src/request/index.js';

/** What the test server saw of one request. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real HTTP server on 127.0.0.1 with a route table; records every request it receives. */
export interface TestServer {
  origin: string;
  port: number;
  host: string;
  seen: Seen[];
  close(): Promise<void>;
}

export type Route = (req: IncomingMessage, res: ServerResponse, seen: Seen) => unknown;

export async function startServer(routes: Record<string, Route>): Promise<TestServer> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(entry);
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const route = routes[path];
      if (!route) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no route');
        return;
      }
      void Promise.resolve(route(req, res, entry)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    host: `127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A fetch that records each URL it is asked for, then delegates to real fetch, but only for
 * 127.0.0.1: should the policy ever let another address through, the test fails without real traffic.
 */
export function recordingFetch(delegate: typeof fetch = globalThis.fetch): {
  fetch: typeof fetch;
  urls: string[];
} {
  const urls: string[] = [];
  const fn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    urls.push(url);
    if (new URL(url).hostname !== '127.0.0.1') throw new Error(`test guard: no real request to ${url}`);
    return delegate(input, init);
  }) as typeof fetch;
  return { fetch: fn, urls };
}

/** Options with test-sized limits; override what a test needs. */
export function options(overrides: Partial<RequestOptions> & Pick<RequestOptions, 'fetch'>): RequestOptions {
  return {
    allowHosts: [],
    timeouts: { headersMs: 5_000, totalMs: 10_000 },
    maxResponseBytes: 5 * 1024 * 1024,
    maxRedirects: 5,
    ...overrides,
  };
}
