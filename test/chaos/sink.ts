/**
 * The loopback HTTP sink the chaos workflows call: an effect in the outside world that sees every
 * physical call and its `Idempotency-Key`, so a test can count duplicates. It listens on 127.0.0.1
 * only and answers each POST after a delay of its choosing, so steps take long enough for a kill
 * to land in the middle of them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A sink listening on 127.0.0.1. */
export interface Sink {
  /** Its URL, e.g. `http://127.0.0.1:41234/effect`. */
  url: string;
  /** The idempotency key of every physical call, in arrival order. */
  readonly calls: readonly string[];
  /** Physical calls by idempotency key. */
  byKey(): Map<string, number>;
  /** Keys that arrived more than once, with their count. */
  duplicates(): [string, number][];
  /** Stops listening. */
  close(): Promise<void>;
}

/** Options of {@link startSink}. */
export interface SinkOptions {
  /** How long the sink takes to answer a call, in ms. @default () => 0 */
  delayMs?: () => number;
}

/** Starts a sink on a free port of 127.0.0.1. */
export async function startSink(options: SinkOptions = {}): Promise<Sink> {
  const delayMs = options.delayMs ?? (() => 0);
  const calls: string[] = [];
  const server = createServer(function sinkCall(request: IncomingMessage, response: ServerResponse) {
    const key = request.headers['idempotency-key'];
    if (request.method !== 'POST' || typeof key !== 'string' || key === '') {
      response.writeHead(400).end('a POST with an Idempotency-Key header is expected');
      return;
    }
    calls.push(key);
    request.resume();
    request.on('end', () => {
      const count = calls.filter((k) => k === key).length;
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count }));
      }, delayMs());
    });
  });
  // A killed worker leaves its connection half open; the sink must not wait on it to close.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const byKey = () => {
    const counts = new Map<string, number>();
    for (const key of calls) counts.set(key, (counts.get(key) ?? 0) + 1);
    return counts;
  };
  return {
    url: `http://127.0.0.1:${port}/effect`,
    calls,
    byKey,
    duplicates: () => [...byKey()].filter(([, count]) => count > 1),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
