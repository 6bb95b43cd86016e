import { readLimited } from '../bytes/read-limited.js';
import { locateJsonError } from './json-error.js';
import type { IncomingRequest } from './incoming.js';
import { HttpProblem, problem } from './problem.js';

/** What a body is read from: a web `Request`, or a request `serve` made from Node's. @internal */
export type BodySource = Pick<IncomingRequest, 'headers' | 'body' | 'readWhole'>;

/** Limits on what a request may carry. @internal */
export interface BodyLimits {
  maxBodyBytes: number;
  maxJsonDepth: number;
}

/** Decodes UTF-8, failing on a malformed sequence (one decoder: each `decode` call starts afresh). */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Media types a JSON route accepts: `application/json` and any `+json` type. */
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
/** Media types of a script source. */
const SCRIPT_TYPES = new Set([
  'text/plain',
  'application/javascript',
  'text/javascript',
  'application/ecmascript',
  'text/ecmascript',
]);

/** The media type of a request, lower case without parameters, or undefined when it has none. @internal */
export function mediaType(request: Pick<IncomingRequest, 'headers'>): string | undefined {
  const header = request.headers.get('content-type');
  if (!header) return undefined;
  return header.split(';')[0]!.trim().toLowerCase();
}

function unsupported(type: string | undefined, accepted: string): HttpProblem {
  return new HttpProblem(
    problem(
      415,
      'unsupported_media_type',
      `${type ? `Content-Type ${type} is not accepted` : 'The request has a body but no Content-Type'}; send ${accepted}.`,
    ),
    { accept: accepted },
  );
}

function tooLarge(limit: number): HttpProblem {
  return new HttpProblem(
    problem(
      413,
      'limit_exceeded',
      `The request body is larger than the limit of ${limit} bytes (maxBodyBytes).`,
      [{ code: 'limit_exceeded', path: '', message: `the body must be at most ${limit} bytes` }],
    ),
  );
}

/**
 * Reads the whole body, counting the decoded bytes while they arrive and stopping at the limit,
 * so a huge or endless body never sits in memory. `gzip` and `deflate` bodies are decoded first.
 * @internal
 */
export async function readBytes(request: BodySource, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes && !request.headers.get('content-encoding'))
    throw tooLarge(maxBytes);
  const encoding = request.headers.get('content-encoding')?.trim().toLowerCase();
  const plain = !encoding || encoding === 'identity';
  if (plain && request.readWhole) return limited(request.readWhole(maxBytes), maxBytes);
  if (!request.body) return new Uint8Array(0);
  let stream: ReadableStream<Uint8Array> = request.body;
  if (!plain) {
    if ((encoding !== 'gzip' && encoding !== 'deflate') || typeof DecompressionStream === 'undefined') {
      throw new HttpProblem(
        problem(
          415,
          'unsupported_encoding',
          `Content-Encoding ${encoding} is not supported; send gzip, deflate or no encoding.`,
        ),
        // RFC 9110 15.5.16: the codings that would have been accepted.
        { 'accept-encoding': 'gzip, deflate' },
      );
    }
    stream = stream.pipeThrough(
      new DecompressionStream(encoding) as unknown as ReadableWritablePair<Uint8Array, Uint8Array>,
    );
  }
  return limited(readLimited(stream, maxBytes), maxBytes);
}

/** The bytes of a body read within `maxBytes`: past them a 413, a failed read a 400. */
async function limited(read: Promise<Uint8Array | undefined>, maxBytes: number): Promise<Uint8Array> {
  let bytes: Uint8Array | undefined;
  try {
    bytes = await read;
  } catch {
    throw new HttpProblem(
      problem(400, 'unreadable_body', 'The request body could not be read (or decoded).'),
    );
  }
  if (bytes === undefined) throw tooLarge(maxBytes);
  return bytes;
}

/**
 * Reads a JSON body. An empty body gives `undefined` when `optional`, else a 400. The nesting depth is
 * checked on the text before parsing, and a syntax error names its line and column.
 * @internal
 */
export async function readJson(request: BodySource, limits: BodyLimits, optional = false): Promise<unknown> {
  const type = mediaType(request);
  checkJsonType(type);
  return jsonOf(await readBytes(request, limits.maxBodyBytes), type, limits, optional);
}

/** A Content-Type that is not JSON (`application/json`, `+json`) is a 415; none is read as JSON. */
function checkJsonType(type: string | undefined): void {
  if (type !== undefined && !JSON_TYPE.test(type)) throw unsupported(type, 'application/json');
}

/**
 * The JSON value of body bytes already read (a webhook reads them first to check their signature):
 * UTF-8, depth-checked, with errors as {@link readJson} gives them. @internal
 */
export function jsonOf(
  bytes: Uint8Array,
  type: string | undefined,
  limits: BodyLimits,
  optional = false,
): unknown {
  checkJsonType(type);
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new HttpProblem(problem(400, 'invalid_json', 'The request body is not valid UTF-8 text.'));
  }
  if (text.trim() === '') {
    if (optional) return undefined;
    throw missingBody('a JSON body');
  }
  if (type === undefined) throw unsupported(type, 'application/json');
  checkDepth(text, limits.maxJsonDepth);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpProblem(
      problem(400, 'invalid_json', `The request body is not valid JSON: ${describeSyntaxError(text)}.`),
    );
  }
}

/**
 * Reads a script source sent as text. An empty (or blank) body gives `""` when `optional`, else a
 * 400 `missing_body`, as for JSON bodies. @internal
 */
export async function readScript(request: BodySource, limits: BodyLimits, optional = false): Promise<string> {
  const type = mediaType(request);
  if (type !== undefined && !SCRIPT_TYPES.has(type)) throw unsupported(type, 'text/plain');
  // The source is read as UTF-8: a body that says it is in another charset would be misread.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers.get('content-type') ?? '')?.[1];
  if (charset !== undefined && !/^(utf-?8|us-ascii)$/i.test(charset))
    throw unsupported(`${type}; charset=${charset}`, 'text/plain; charset=utf-8');
  const bytes = await readBytes(request, limits.maxBodyBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HttpProblem(problem(400, 'invalid_text', 'The script source is not valid UTF-8 text.'));
  }
  if (text.trim() === '') {
    if (optional) return '';
    throw missingBody('the script source as text');
  }
  if (type === undefined) throw unsupported(type, 'text/plain');
  return text;
}

/** The 400 of a required body that is empty or blank; `what` says what the request needs. */
function missingBody(what: string): HttpProblem {
  return new HttpProblem(
    problem(400, 'missing_body', `The request needs ${what}.`, [
      { code: 'required', path: '', message: `${what} is required` },
    ]),
  );
}

/** Counts `[`/`{` nesting outside strings; deeper than `max` is a 400 before anything is parsed. */
function checkDepth(text: string, max: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) {
        throw new HttpProblem(
          problem(400, 'too_deep', `The JSON body is nested more than ${max} levels deep (maxJsonDepth).`, [
            {
              code: 'too_deep',
              path: '',
              message: `nesting deeper than ${max} levels at ${lineAndColumn(text, i)}`,
            },
          ]),
        );
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

function describeSyntaxError(text: string): string {
  const { index, reason } = locateJsonError(text);
  return `${reason} at ${lineAndColumn(text, index)}`;
}

function lineAndColumn(text: string, index: number): string {
  let line = 1;
  let start = 0;
  for (let i = 0; i < index && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      start = i + 1;
    }
  }
  return `line ${line} column ${index - start + 1}`;
}
