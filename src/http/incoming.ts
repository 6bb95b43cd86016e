/**
 * What the handler reads of a request. A web `Request` has all of it; `serve` gives its own
 * requests, made straight from Node's, so that a request the API answers in memory never becomes
 * an undici `Request` (whose making, with its headers and body stream, cost as much as the rest).
 * @internal
 * @module
 */
import type { Answer } from './answer.js';

/** The headers of a request as the handler reads them: by lower-case name, repeated ones joined. @internal */
export interface HeaderReader {
  get(name: string): string | null;
  has(name: string): boolean;
}

/** A request as the handler reads it; a web `Request` is one. @internal */
export interface IncomingRequest {
  /** The method, as sent. */
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  /** `url` parsed already, where the request was made from a parsed one; read, never changed. */
  readonly parsedUrl?: URL;
  readonly headers: HeaderReader;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  /** The body as a web stream, or null without one. */
  readonly body: ReadableStream<Uint8Array> | null;
  /**
   * The whole body as it came (no `Content-Encoding` decoded), or undefined as soon as it passes
   * `maxBytes`, read without a web stream. Rejects when the body cannot be read.
   */
  readWhole?(maxBytes: number): Promise<Uint8Array | undefined>;
}

/**
 * What the checks of who is asking read of a request: its URL and headers. A web `Request` is one,
 * and so is every {@link IncomingRequest}. @internal
 */
export type RequestHead = Pick<IncomingRequest, 'url' | 'headers'>;

/** The web `Request` of an {@link IncomingRequest}, made on first call. @internal */
export interface RequestMaker {
  /** The request, body and all: what hooks and routes are given. */
  request(): Request;
}

/**
 * How `createHandler`'s handler answers an {@link IncomingRequest}, making a web `Request` of it
 * only for what needs one. A `Response` is sized already; a whole answer is sent as it is (for a
 * HEAD, without its body). @internal
 */
export type IncomingHandler = (request: IncomingRequest, made: RequestMaker) => Promise<Answer>;

/**
 * The key under which `createHandler`'s handler carries its {@link IncomingHandler}. A global
 * symbol: a bundle with its own copy of this module finds it too. @internal
 */
export const INCOMING_HANDLER: unique symbol = Symbol.for('stepwire.incomingHandler') as never;
