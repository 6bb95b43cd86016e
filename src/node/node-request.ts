/**
 * A Node request as the fetch handler reads it ({@link IncomingRequest}), made without undici: its
 * headers are read from Node's, its body straight from Node's stream. The web `Request` of it is
 * made only when something asks for one.
 * @internal
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readLimited } from '../bytes/read-limited.js';
import type { HeaderReader, IncomingRequest, RequestMaker } from '../http/incoming.js';

/**
 * The header the handler reads the client's address from (sign-in attempts are counted by it): set
 * from the socket, never taken from the client.
 * @internal
 */
export const CLIENT_ADDRESS_HEADER = 'x-stepwire-client-address';

/**
 * Headers read straight from Node's raw list, nothing copied: by name in any case, repeated ones
 * joined as `Headers` joins them (`, `, and `; ` for cookies). Names starting with `:` are left out,
 * and the client's address header is the socket's (one a client sent is not believed).
 */
class NodeHeaders implements HeaderReader {
  readonly #raw: string[];
  readonly #address: string | undefined;

  constructor(raw: string[], address: string | undefined) {
    this.#raw = raw;
    this.#address = address;
  }

  get(name: string): string | null {
    const lower = name.toLowerCase();
    if (lower === CLIENT_ADDRESS_HEADER) return this.#address ?? null;
    const raw = this.#raw;
    let value: string | null = null;
    for (let i = 0; i < raw.length; i += 2) {
      const key = raw[i]!;
      if (key.length !== lower.length || key.toLowerCase() !== lower) continue;
      value = value === null ? raw[i + 1]! : `${value}${lower === 'cookie' ? '; ' : ', '}${raw[i + 1]!}`;
    }
    return value;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  /** The headers as they came, in order, for a `Request` (the client's address header replaced). */
  pairs(): [string, string][] {
    const raw = this.#raw;
    const pairs: [string, string][] = [];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      if (name.startsWith(':') || name.toLowerCase() === CLIENT_ADDRESS_HEADER) continue;
      pairs.push([name, raw[i + 1]!]);
    }
    if (this.#address) pairs.push([CLIENT_ADDRESS_HEADER, this.#address]);
    return pairs;
  }
}

/**
 * A request of `serve`'s. Its body is read once, by one of three means: {@link readWhole} (the
 * handler's JSON and script bodies), {@link body} (a web stream) or the `Request` of
 * {@link toRequest}, which takes over the stream or the bytes already read. Its `signal` is made
 * when first asked for: most requests are answered without anyone asking.
 * @internal
 */
export class NodeRequest implements IncomingRequest, RequestMaker {
  readonly headers: NodeHeaders;
  readonly url: string;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #hasBody: boolean;
  #stream: ReadableStream<Uint8Array> | undefined;
  #bytes: Uint8Array | undefined;
  #request: Request | undefined;
  #controller: AbortController | undefined;
  /** Set once the bridge refused the request (its body turned out malformed). */
  #failed = false;
  /** Fails the body read under way, if any. */
  #failRead: ((error: unknown) => void) | undefined;

  constructor(
    req: IncomingMessage,
    res: ServerResponse,
    /** The URL, parsed once: the handler reads it instead of parsing `url` again. */
    readonly parsedUrl: URL,
    readonly method: string,
  ) {
    this.#req = req;
    this.#res = res;
    this.url = parsedUrl.href;
    this.#hasBody = method !== 'GET' && method !== 'HEAD';
    this.headers = new NodeHeaders(req.rawHeaders, req.socket.remoteAddress);
  }

  /**
   * Aborts when the client goes away before the answer is sent, or when the bridge refuses the
   * request. Made on first use; made after either, it is aborted already.
   */
  get signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = (this.#controller = new AbortController());
    const res = this.#res;
    if (this.#failed || (res.destroyed && !res.writableFinished)) controller.abort();
    else res.once('close', abortUnfinished.bind(res, controller));
    return controller.signal;
  }

  /** Refuses the request: its signal aborts and a body read under way fails. */
  fail(): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#controller?.abort();
    this.#failRead?.(new DOMException('This operation was aborted', 'AbortError'));
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (!this.#hasBody) return null;
    if (this.#bytes !== undefined) return streamOf(this.#bytes);
    return (this.#stream ??= bodyStream(this.#req, this.signal));
  }

  /**
   * Reads the body into memory from Node's stream, up to `maxBytes`; the rest is left unread. Once
   * its web stream is made (a `Request` of it was asked for), the body is read from that stream.
   */
  readWhole(maxBytes: number): Promise<Uint8Array | undefined> {
    if (!this.#hasBody) return Promise.resolve(new Uint8Array(0));
    if (this.#stream !== undefined) return readLimited(this.#stream, maxBytes);
    if (this.#bytes !== undefined) return Promise.reject(new TypeError('the request body was read already'));
    // Refused, or the client is gone: no body will come.
    const res = this.#res;
    if (this.#failed || this.#req.destroyed || (res.destroyed && !res.writableFinished))
      return Promise.reject(new DOMException('This operation was aborted', 'AbortError'));
    return new Promise<Uint8Array | undefined>((resolve, reject) => {
      this.#failRead = reject;
      readNodeBody(this.#req, maxBytes, resolve, reject);
    }).then((bytes) => {
      this.#failRead = undefined;
      if (bytes !== undefined) this.#bytes = bytes;
      return bytes;
    });
  }

  /** The web `Request` of this request: what hooks and routes are given. */
  request(): Request {
    return this.toRequest();
  }

  /**
   * The web `Request` of this request, made once. Throws a TypeError for a method fetch refuses.
   */
  toRequest(): Request {
    if (this.#request) return this.#request;
    const init: RequestInit & { duplex?: 'half' } = { method: this.method, headers: this.headers.pairs() };
    const body = this.body;
    if (body) {
      init.body = body;
      init.duplex = 'half';
    }
    return (this.#request = new BridgedRequest(this.url, init, this.signal));
  }
}

/** Aborts `controller` when its response (`this`) closes before it was all sent. */
function abortUnfinished(this: ServerResponse, controller: AbortController): void {
  if (!this.writableFinished) controller.abort();
}

/**
 * A request whose `signal` is the bridge's own, which aborts when the client goes away or its body
 * turns out malformed. Handing `signal` to the `Request` constructor instead would make the request
 * follow it through a signal of its own (a listener, a weak reference and a finalizer per request),
 * which costs more than the rest of the request's making.
 */
class BridgedRequest extends Request {
  readonly #signal: AbortSignal;

  constructor(url: string, init: RequestInit, signal: AbortSignal) {
    super(url, init);
    this.#signal = signal;
  }

  override get signal(): AbortSignal {
    return this.#signal;
  }
}

/**
 * Reads the body from Node's stream into one array and resolves with it, or with undefined as soon
 * as it passes `maxBytes` (what is left is not read: the bridge drains it after the answer). Rejects
 * when the stream fails or closes before its end.
 */
function readNodeBody(
  req: IncomingMessage,
  maxBytes: number,
  resolve: (bytes: Uint8Array | undefined) => void,
  reject: (error: unknown) => void,
): void {
  new BodyRead(req, maxBytes, resolve, reject).start();
}

/** A body read under way: its listeners are bound methods, so a read makes no closures. */
class BodyRead {
  readonly #chunks: Uint8Array[] = [];
  #size = 0;
  readonly #onData: (chunk: Uint8Array) => void;
  readonly #onEnd: () => void;
  readonly #onFail: (error?: unknown) => void;

  constructor(
    readonly req: IncomingMessage,
    readonly maxBytes: number,
    readonly resolve: (bytes: Uint8Array | undefined) => void,
    readonly reject: (error: unknown) => void,
  ) {
    this.#onData = this.#data.bind(this);
    this.#onEnd = this.#end.bind(this);
    this.#onFail = this.#fail.bind(this);
  }

  start(): void {
    const req = this.req;
    req.on('data', this.#onData);
    req.once('end', this.#onEnd);
    req.once('error', this.#onFail);
    req.once('close', this.#onFail);
  }

  #stop(): void {
    const req = this.req;
    req.off('data', this.#onData);
    req.off('end', this.#onEnd);
    req.off('error', this.#onFail);
    req.off('close', this.#onFail);
  }

  #data(chunk: Uint8Array): void {
    this.#size += chunk.byteLength;
    if (this.#size > this.maxBytes) {
      this.#stop();
      this.req.pause();
      this.resolve(undefined);
    } else this.#chunks.push(chunk);
  }

  #end(): void {
    this.#stop();
    const chunks = this.#chunks;
    const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size);
    this.resolve(new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength));
  }

  /** An error of the stream, or its close (no error) before its end. */
  #fail(error?: unknown): void {
    this.#stop();
    this.reject(error ?? new DOMException('The request closed before its body ended', 'AbortError'));
  }
}

/** A stream of bytes already read. */
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

/**
 * The request body as a web stream with backpressure; cancelling it stops reading but keeps the
 * socket. It fails when `signal` aborts: a body Node found malformed never ends otherwise.
 */
function bodyStream(req: IncomingMessage, signal: AbortSignal): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        let open = true;
        const fail = (error: unknown) => {
          if (open) controller.error(error);
          open = false;
        };
        req.on('data', (chunk: Uint8Array) => {
          if (!open) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 1) <= 0) req.pause();
        });
        req.once('end', () => {
          if (open) controller.close();
          open = false;
        });
        req.once('error', fail);
        signal.addEventListener('abort', () => fail(signal.reason), { once: true });
        req.pause();
      },
      pull() {
        req.resume();
      },
      cancel() {
        req.pause();
        req.removeAllListeners('data');
      },
    },
    { highWaterMark: 1 },
  );
}
