/**
 * A Node request as the fetch handler reads it ({@link IncomingRequest}), made without undici: its
 * headers are read from Node's, its body straight from Node's stream. The web `Request` of it is
 * made only when something asks for one.
 * @internal
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { readLimited } from '../bytes/read-limited.js';
import type { HeaderReader, IncomingRequest } from '../http/incoming.js';

/** Headers by lower-case name, repeated ones joined as `Headers` joins them (`, `, and `; ` for cookies). */
class NodeHeaders implements HeaderReader {
  readonly #values = new Map<string, string>();

  /** Adds a header; `name` is lower case. */
  add(name: string, value: string): void {
    const before = this.#values.get(name);
    this.#values.set(
      name,
      before === undefined ? value : `${before}${name === 'cookie' ? '; ' : ', '}${value}`,
    );
  }

  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }
}

/**
 * A request of `serve`'s. Its body is read once, by one of three means: {@link readWhole} (the
 * handler's JSON and script bodies), {@link body} (a web stream) or the `Request` of
 * {@link toRequest}, which takes over the stream or the bytes already read.
 * @internal
 */
export class NodeRequest implements IncomingRequest {
  readonly headers = new NodeHeaders();
  /** The headers as they came, in order, for the `Request` (the client's address header replaced). */
  readonly #pairs: [string, string][] = [];
  readonly #req: IncomingMessage;
  readonly #hasBody: boolean;
  #stream: ReadableStream<Uint8Array> | undefined;
  #bytes: Uint8Array | undefined;
  #request: Request | undefined;

  constructor(
    req: IncomingMessage,
    readonly url: string,
    readonly method: string,
    readonly signal: AbortSignal,
  ) {
    this.#req = req;
    this.#hasBody = method !== 'GET' && method !== 'HEAD';
  }

  /** Adds a header as it came; `lower` is its name in lower case. */
  addHeader(name: string, lower: string, value: string): void {
    this.#pairs.push([name, value]);
    this.headers.add(lower, value);
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
    return readNodeBody(this.#req, maxBytes, this.signal).then((bytes) => {
      if (bytes !== undefined) this.#bytes = bytes;
      return bytes;
    });
  }

  /**
   * The web `Request` of this request, made once. Throws a TypeError for a method fetch refuses.
   */
  toRequest(): Request {
    if (this.#request) return this.#request;
    const init: RequestInit & { duplex?: 'half' } = { method: this.method, headers: this.#pairs };
    const body = this.body;
    if (body) {
      init.body = body;
      init.duplex = 'half';
    }
    return (this.#request = new BridgedRequest(this.url, init, this.signal));
  }
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
 * The body read from Node's stream into one array, or undefined as soon as it passes `maxBytes`
 * (what is left is not read: the bridge drains it after the answer). Rejects when the stream
 * fails or `signal` aborts (a body Node found malformed never ends otherwise).
 */
function readNodeBody(
  req: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      signal.removeEventListener('abort', onAbort);
    };
    const onData = (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        stop();
        req.pause();
        resolve(undefined);
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      const whole = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      resolve(new Uint8Array(whole.buffer, whole.byteOffset, whole.byteLength));
    };
    const onError = (error: unknown) => {
      stop();
      reject(error);
    };
    const onAbort = () => onError(signal.reason);
    if (signal.aborted) return onAbort();
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
  });
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
