/**
 * What the handler answers before it is a web `Response`: an answer the API made whole in memory,
 * which `serve` writes to Node as it is and a fetch caller gets as a `Response`.
 * @internal
 * @module
 */
import { WHOLE_BODY } from './problem.js';

/**
 * An answer made whole in memory: its status, headers (lower-case names, no `content-length`: the
 * body's length is said where it is sent) and body as UTF-8 text. Making a `Response` costs more
 * than the rest of a small answer, so it is made only for a caller that needs one. @internal
 */
export class WholeAnswer {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly text: string,
  ) {}
}

/** What a route answers: a `Response`, or an answer made whole in memory. @internal */
export type Answer = Response | WholeAnswer;

const encoder = new TextEncoder();

/**
 * A whole answer of `text`; `headers` are added to (and may replace) `defaults`, their names
 * compared in lower case, as a `Headers` would. A `content-length` among them is left out. @internal
 */
export function wholeAnswer(
  status: number,
  text: string,
  defaults: Readonly<Record<string, string>>,
  headers: Record<string, string> = {},
): WholeAnswer {
  const all: Record<string, string> = { ...defaults };
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower !== 'content-length') all[lower] = headers[name]!;
  }
  return new WholeAnswer(status, all, text);
}

/**
 * The answer as a web `Response`; a HEAD's has no body but the GET answer's headers, its
 * `Content-Length` included. It carries its bytes under {@link WHOLE_BODY}, as `wholeResponse`'s do.
 * @internal
 */
export function toResponse(answer: WholeAnswer, head: boolean): Response {
  const { status, text } = answer;
  const bytes = encoder.encode(text);
  const headers = { ...answer.headers, 'content-length': String(bytes.byteLength) };
  if (head) return new Response(null, { status, headers });
  const response = new Response(bytes, { status, headers });
  Object.defineProperty(response, WHOLE_BODY, { value: bytes });
  return response;
}
