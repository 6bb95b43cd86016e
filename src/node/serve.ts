import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Answer } from '../http/answer.js';
import { INCOMING_HANDLER, type IncomingHandler } from '../http/incoming.js';
import { wholeBody } from '../http/problem.js';
import { NodeRequest } from './node-request.js';

/** Options of {@link serve}. */
export interface ServeOptions {
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** Address to listen on. @default "127.0.0.1" */
  hostname?: string;
}

/** A running server. */
export interface RunningServer {
  /**
   * Base URL of the server, e.g. `http://127.0.0.1:54321`. A wildcard listen address (`0.0.0.0`,
   * `::`) is no address a client can use, so the URL names loopback then (`127.0.0.1`, `[::1]`).
   */
  url: string;
  /** The underlying Node server. */
  server: Server;
  /** Stops accepting connections, closes idle keep-alive ones and resolves when the server is closed. */
  close(): Promise<void>;
}

/**
 * Serves a web-standard fetch handler (such as `createHandler(engine)`) with Node's `http` module:
 * each request becomes a `Request` whose body streams in, and the `Response` streams back out.
 * `createHandler`'s handler is given Node's request as it is instead, and makes a `Request` of it
 * only where a hook or route asks for one: answering from memory then costs no undici objects.
 * The request's `signal` aborts when the client goes away before the answer is sent, or when its
 * body turns out malformed (the client then gets a 400 instead of the handler's answer).
 * @example
 * ```ts
 * const server = await serve(createHandler(engine), { port: 8787 });
 * console.log(`listening on ${server.url}`);
 * ```
 * @throws TypeError when `handler` is no function or `options.port` no whole number from 0 to 65535.
 */
export async function serve(
  handler: (request: Request) => Response | Promise<Response>,
  options: ServeOptions = {},
): Promise<RunningServer> {
  if (typeof handler !== 'function')
    throw new TypeError('serve needs a fetch handler: a function from Request to Response');
  const port = options.port ?? 0;
  if (!(Number.isInteger(port) && port >= 0 && port <= 65_535))
    throw new TypeError(`serve options.port must be a whole number from 0 to 65535, got ${String(port)}`);
  const hostname = options.hostname ?? '127.0.0.1';
  // A request without Host is refused by the bridge with problem details, not Node's bare 400.
  const server = createServer({ requireHostHeader: false }, function stepwireNodeBridge(req, res) {
    // Nothing in the bridge should throw; if it does, that connection fails, never the process.
    bridge(handler, req, res, hostname).catch(() => res.destroy());
  });
  server.on('clientError', answerClientError);
  server.on('connect', refuseConnect);
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const expect = String(req.headers.expect).slice(0, 100);
    void writeResponse(
      problemAnswer(417, 'Expectation Failed', 'expectation_failed', `Expect: ${expect} is not supported.`),
      res,
      req.method === 'HEAD',
    ).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${formatHost(linkHost(hostname))}:${bound}`,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}

/**
 * Answers a request Node cannot parse (an unknown method, a malformed or too large head, a malformed
 * chunked body) with problem details too, instead of Node's bare 400, then closes the connection.
 * A request whose body turns out malformed once its handler has started is answered by its bridge,
 * so that the handler's answer and this one are never both sent.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const body = bodies.get(socket);
  bodies.delete(socket);
  if (body?.fail(error)) return;
  // Node reports each further chunk of a connection it cannot parse: the first one was answered.
  if (failed.has(socket)) return;
  if (!socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  failed.add(socket);
  const [status, title, code, detail] = clientProblem(error);
  endWithProblem(socket, status, title, code, detail);
}

/** Status, title, code and detail of the answer to a request Node could not parse. */
function clientProblem(error: Error & { code?: string }): [number, string, string, string] {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request head is too large.'];
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [408, 'Request Timeout', 'request_timeout', 'The request took too long to arrive.'];
  return [400, 'Bad Request', 'malformed_request', 'The request is not valid HTTP/1.1.'];
}

/**
 * Writes a problem details answer straight to a connection Node no longer parses, then ends it. The
 * connection closes once the client closes its side too, or after DRAIN_MS.
 */
function endWithProblem(socket: Duplex, status: number, title: string, code: string, detail: string): void {
  const body = problemBody(status, title, code, detail);
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  const timer = setTimeout(() => socket.destroy(), DRAIN_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Answers `CONNECT` (a tunnel request, for proxies), which Node hands over with its bare socket, with
 * 501 problem details as for other methods fetch cannot carry. What the client sends after it is
 * read and dropped until it closes, or DRAIN_MS, so that the answer is not lost to a reset.
 */
function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  endWithProblem(socket, 501, 'Not Implemented', 'method_not_implemented', 'CONNECT is not supported.');
  socket.resume();
}

/**
 * The request of each connection whose body is still arriving, and how to answer if Node finds that
 * body malformed (a bad chunk size): Node then reports the connection, not the request.
 */
const bodies = new WeakMap<Duplex, Exchange>();
/** Connections already answered for a request Node could not parse. */
const failed = new WeakSet<Duplex>();

/**
 * A request under way whose body is still arriving: how to answer if Node finds that body malformed
 * (a bad chunk size), whether the handler answered already.
 */
class Exchange {
  /** Set once an answer is chosen: the handler's, or the refusal of a body Node finds malformed. */
  answered = false;
  /** The request as the handler reads it, once made. */
  request: NodeRequest | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly head: boolean,
  ) {}

  /** Answers the body's error, unless the body had all arrived (the error is then another request's). */
  fail(error: Error & { code?: string }): boolean {
    const { req, res } = this;
    if (req.complete) return false;
    const socket = req.socket;
    failed.add(socket);
    if (this.answered) {
      // The handler's answer is out or going out: the connection, which cannot go on, ends after
      // it (what the client still sends is dropped meanwhile, see drain).
      if (res.writableFinished) socket.end();
      else res.once('finish', () => socket.end());
      return true;
    }
    this.answered = true;
    this.request?.fail();
    const [status, title, code, detail] = clientProblem(error);
    const refusal = problemAnswer(status, title, code, detail);
    refusal.headers.set('connection', 'close');
    void writeResponse(refusal, res, this.head).catch(() => res.destroy());
    return true;
  }
}

/** Forgets the exchange of a request (`this`) whose body has all arrived. */
function forgetBody(this: IncomingMessage): void {
  const socket = this.socket;
  if (bodies.get(socket)?.req === this) bodies.delete(socket);
}

/** Drains what is left of the body of a response's (`this`) request once the answer is sent. */
function drainAfter(this: ServerResponse): void {
  drain(this.req);
}

async function bridge(
  handler: (request: Request) => Response | Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
  hostname: string,
): Promise<void> {
  const exchange = new Exchange(req, res, req.method === 'HEAD');
  if (!req.complete) {
    bodies.set(req.socket, exchange);
    req.once('end', forgetBody);
  }
  let response: Answer;
  const request = toIncoming(req, res, hostname);
  if (request instanceof Response) response = request;
  else {
    exchange.request = request;
    try {
      response = await answerWith(handler, request);
    } catch {
      response = problemAnswer(500, 'Internal Server Error', 'internal_error', 'The handler failed.');
    }
  }
  if (exchange.answered) {
    // The request was refused while the handler worked: its answer is dropped.
    if (response instanceof Response) void response.body?.cancel().catch(() => {});
    return;
  }
  exchange.answered = true;
  // A body the handler did not read (a 404, a 413) is read and dropped once the answer is sent: a
  // client still sending it then reads the answer, where closing the socket on unread bytes would
  // reset the connection under it. Past DRAIN_BYTES or DRAIN_MS the connection is cut.
  res.once('finish', drainAfter);
  const head = exchange.head;
  if (response instanceof Response) await writeResponse(response, res, head);
  else {
    // A whole answer goes out with its head in one write, as bare node:http sends a string.
    const { status, headers, text } = response;
    res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(text) });
    res.end(head ? undefined : text);
  }
}

/**
 * The handler's answer: `createHandler`'s handler answers the Node request as it is (a `Request`
 * is made only if a hook or route asks for one); any other handler gets a `Request`.
 */
function answerWith(
  handler: (request: Request) => Response | Promise<Response>,
  request: NodeRequest,
): Promise<Answer> | Response {
  const direct = (handler as { [INCOMING_HANDLER]?: IncomingHandler })[INCOMING_HANDLER];
  if (typeof direct === 'function') return direct(request, request);
  return handler(request.toRequest());
}

/** Most bytes of an unread body read and dropped after the answer before the connection is cut. */
const DRAIN_BYTES = 16 * 1024 * 1024;
/** Longest wait for the rest of an unread body after the answer before the connection is cut. */
const DRAIN_MS = 10_000;

/** Reads and drops what is left of a request's body, within DRAIN_BYTES and DRAIN_MS. */
function drain(req: IncomingMessage): void {
  if (req.readableEnded || req.destroyed) return;
  // The body stream the handler left unread would buffer it: its listener goes.
  req.removeAllListeners('data');
  let dropped = 0;
  const cut = () => req.destroy();
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  req.on('data', (chunk: Uint8Array) => {
    dropped += chunk.byteLength;
    if (dropped > DRAIN_BYTES) cut();
  });
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

/**
 * The request as the handler reads it, or the answer refusing it: a `Host` that is not a host (a
 * value such as `evil/x`, `a@b` or `h?` would otherwise move into the URL's path, user or query,
 * RFC 9112 3.2), or a method fetch cannot carry.
 */
function toIncoming(req: IncomingMessage, res: ServerResponse, hostname: string): NodeRequest | Response {
  let hosts = 0;
  let host = '';
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      hosts++;
      host = raw[i + 1]!;
    }
  }
  // HTTP/1.1 requires a Host header (RFC 9112 3.2); an HTTP/1.0 request may leave it out.
  const missing = hosts === 0 && req.httpVersion !== '1.0';
  if (missing || hosts > 1 || (host !== '' && !HOST.test(host)))
    return problemAnswer(
      400,
      'Bad Request',
      'invalid_host',
      missing
        ? 'The request has no Host header.'
        : hosts > 1
          ? 'The request has more than one Host header.'
          : 'The Host header is not a host name.',
    );
  let url: URL;
  try {
    url = requestUrl(req.url ?? '/', `http://${host || formatHost(hostname)}`);
  } catch {
    return problemAnswer(400, 'Bad Request', 'invalid_target', 'The request target is not a valid URL.');
  }
  const method = req.method ?? 'GET';
  // Fetch refuses some methods Node parses (TRACE, TRACK): the handler could not be given them.
  if (FORBIDDEN_METHODS.test(method))
    return problemAnswer(501, 'Not Implemented', 'method_not_implemented', `${method} is not supported.`);
  return new NodeRequest(req, res, url, method);
}

/** Methods the fetch `Request` refuses (forbidden methods of the Fetch standard). */
const FORBIDDEN_METHODS = /^(?:CONNECT|TRACE|TRACK)$/i;

/** A `Host` value: a name or IPv4 address (no `/`, `?`, `#`, `@`, `%` or space), or an IPv6 one in brackets, and a port. */
const HOST = /^(?:[A-Za-z0-9._~!$&'()*+,;=-]+|\[[0-9A-Fa-f:.]+\])(?::\d{0,5})?$/;

/** A listening address as the host of a URL: an IPv6 address goes in brackets. */
/** The host a link may name for a listen address: loopback for a wildcard one. */
function linkHost(hostname: string): string {
  if (hostname === '0.0.0.0' || hostname === '') return '127.0.0.1';
  if (hostname === '::' || hostname === '[::]' || hostname === '::0') return '::1';
  return hostname;
}

function formatHost(hostname: string): string {
  return hostname.includes(':') ? `[${hostname}]` : hostname;
}

/** A problem details answer of the bridge itself, for a request the handler never sees or a handler that throws. */
function problemAnswer(status: number, title: string, code: string, detail: string): Response {
  const body = problemBody(status, title, code, detail);
  return new Response(body, {
    status,
    headers: {
      'content-type': 'application/problem+json',
      'content-length': String(new TextEncoder().encode(body).byteLength),
    },
  });
}

/** The problem details text of a problem the bridge answers itself. */
function problemBody(status: number, title: string, code: string, detail: string): string {
  return JSON.stringify({ type: `urn:stepwire:problem:${code}`, status, title, detail, code, errors: [] });
}

/**
 * The URL of a request target. An origin-form target (a path) is appended to the origin as it is:
 * resolving it as a relative URL would read `//workflows/echo` as host `workflows`, path `/echo`.
 * An absolute-form target (sent to proxies) is a URL of its own; `*` (`OPTIONS *`) is the root.
 */
function requestUrl(target: string, origin: string): URL {
  if (target.startsWith('/')) return new URL(origin + target);
  return new URL(target === '*' ? '/' : target, origin);
}

async function writeResponse(response: Response, res: ServerResponse, head: boolean): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  if (!response.body) {
    // No body is a length of 0 (Node would send it chunked); 204 and 304 carry no length, and a
    // HEAD's length is the GET answer's, which this does not know.
    const { status } = response;
    if (!head && status >= 200 && status !== 204 && status !== 304 && headers['content-length'] === undefined)
      headers['content-length'] = '0';
    res.writeHead(response.status, response.statusText || undefined, headers);
    res.end();
    return;
  }
  const whole = wholeBody(response);
  if (whole !== undefined && headers['content-length'] === String(whole.byteLength)) {
    // An answer made whole in memory (the API's own): its bytes go out as they are, in one write.
    res.writeHead(response.status, response.statusText || undefined, headers);
    res.end(head ? undefined : whole);
    return;
  }
  const reader = response.body.getReader();
  try {
    const ahead = await readAhead(reader);
    // A body that was whole at once goes out with its Content-Length (a HEAD gets it too, and no
    // body); one still streaming goes out chunked, its headers first.
    if (
      ahead.pending === undefined &&
      headers['content-length'] === undefined &&
      headers['transfer-encoding'] === undefined
    )
      headers['content-length'] = String(ahead.chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
    res.writeHead(response.status, response.statusText || undefined, headers);
    if (head) {
      // A HEAD sends no body: the rest of one still streaming is not waited for.
      if (ahead.pending) void reader.cancel().catch(() => {});
      res.end();
      return;
    }
    for (const chunk of ahead.chunks) res.write(chunk);
    let next = ahead.pending;
    while (next) {
      const { done, value } = await next;
      if (done) break;
      if (res.destroyed) {
        await reader.cancel();
        return;
      }
      if (!res.write(value))
        await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
      next = reader.read();
    }
    res.end();
  } catch {
    res.destroy();
  }
}

const WAITING = Symbol('waiting');
/** Past this many bytes a body that keeps coming is streamed, whole or not. */
const READ_AHEAD_BYTES = 8 * 1024 * 1024;

/**
 * Reads the chunks a body holds already: an answer made in memory is whole after a read or two.
 * Stops at the first read that is not ready by the next turn of the event loop (counted from the
 * first read), so a streamed answer is never held back, or past {@link READ_AHEAD_BYTES}; `pending`
 * is the next read.
 */
async function readAhead(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<{ chunks: Uint8Array[]; pending?: Promise<ReadableStreamReadResult<Uint8Array>> }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // The next turn of the event loop, the same for every read.
  let turn: Promise<typeof WAITING> | undefined;
  for (;;) {
    const read = reader.read();
    if (size > READ_AHEAD_BYTES) return { chunks, pending: read };
    turn ??= new Promise<typeof WAITING>((resolve) => setImmediate(resolve, WAITING));
    const result = await Promise.race([read, turn]);
    if (result === WAITING) return { chunks, pending: read };
    if (result.done) return { chunks };
    chunks.push(result.value);
    size += result.value.byteLength;
  }
}
