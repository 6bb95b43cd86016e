import { z } from 'zod';
import { errorAnswer, isLimitError, isStepwireError, type Issue } from '../errors/index.js';
import { IssueSchema } from '../schema/index.js';

/** The body of every error answer of the HTTP API: RFC 9457 problem details with stepwire's fields. */
export interface ProblemDetails {
  /** A URI naming the kind of problem: `urn:stepwire:problem:<code>`. */
  type: string;
  /** The HTTP status code, repeated in the body. */
  status: number;
  /** A short summary of the kind of problem, the same for every problem of that kind. */
  title: string;
  /** What went wrong this time, in a sentence a person understands. */
  detail: string;
  /** Stable machine-readable code, the same as the `code` of the stepwire error when there was one. */
  code: string;
  /** Every problem found, each with its path; empty when the problem has no parts. */
  errors: Issue[];
}

/** The shape of {@link ProblemDetails}, for the OpenAPI document. @internal */
export const ProblemDetailsSchema = z
  .object({
    type: z.string().describe('A URI naming the kind of problem: `urn:stepwire:problem:<code>`.'),
    status: z.number().int().describe('The HTTP status code, repeated in the body.'),
    title: z.string().describe('A short summary of the kind of problem.'),
    detail: z.string().describe('What went wrong this time.'),
    code: z.string().describe('Stable machine-readable code.'),
    errors: z.array(IssueSchema).describe('Every problem found, each with its path.'),
  })
  .describe('RFC 9457 problem details; `errors` lists every problem with its path.');

/** Media type of problem details. @internal */
export const PROBLEM_JSON = 'application/problem+json';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** Builds a problem details body; the title defaults to the status's reason phrase. @internal */
export function problem(
  status: number,
  code: string,
  detail: string,
  errors: Issue[] = [],
  title = TITLES[status] ?? 'Error',
): ProblemDetails {
  return {
    type: `urn:stepwire:problem:${code}`,
    status,
    title,
    detail,
    code,
    errors,
  };
}

/** A problem details answer, with extra headers when given. @internal */
export function problemResponse(body: ProblemDetails, headers: Record<string, string> = {}): Response {
  return wholeResponse(body.status, JSON.stringify(body), { 'content-type': PROBLEM_JSON, ...headers });
}

/**
 * The key under which an answer made whole in memory carries its body's bytes, so that a server
 * (`serve`) writes them as they are rather than reading them back from the body's stream. A global
 * symbol: a bundle with its own copy of this module uses the same key. @internal
 */
export const WHOLE_BODY: unique symbol = Symbol.for('stepwire.wholeBody') as never;

const encoder = new TextEncoder();

/**
 * An answer whose body is `text`, with its `Content-Length`, carrying its bytes under
 * {@link WHOLE_BODY}. @internal
 */
export function wholeResponse(status: number, text: string, headers: Record<string, string>): Response {
  const bytes = encoder.encode(text);
  const response = new Response(bytes, {
    status,
    headers: { ...headers, 'content-length': String(bytes.byteLength) },
  });
  Object.defineProperty(response, WHOLE_BODY, { value: bytes });
  return response;
}

/** The bytes an answer made by {@link wholeResponse} carries, while its body is unread. @internal */
export function wholeBody(response: Response): Uint8Array | undefined {
  const bytes = (response as Response & { [WHOLE_BODY]?: Uint8Array })[WHOLE_BODY];
  return bytes !== undefined && !response.bodyUsed ? bytes : undefined;
}

/** An error the handler raises itself to answer with a given problem (bad JSON, wrong media type…). @internal */
export class HttpProblem extends Error {
  override name = 'HttpProblem';
  constructor(
    readonly details: ProblemDetails,
    readonly headers: Record<string, string> = {},
  ) {
    super(details.detail);
  }
}

/**
 * The one place errors become problem details: stepwire errors are answered as `ERROR_CODES` says,
 * with their message and issues. Unexpected errors become a generic 500 whose body says nothing
 * about the internals (no message, no stack). @internal
 */
export function problemFromError(error: unknown): ProblemDetails {
  if (error instanceof HttpProblem) return error.details;
  const answer = errorAnswer(error);
  if (answer && isStepwireError(error))
    return problem(answer.status, error.code, error.message, issuesOf(error), answer.title);
  return problem(
    500,
    'internal_error',
    'The server could not complete the request because of an unexpected error.',
  );
}

/**
 * The most issues an answer lists; past them, one last issue (`more_problems`) says how many more
 * there are. A 1 MiB body of unknown keys would otherwise be answered with some 14 MiB of issues.
 * @internal
 */
export const MAX_LISTED_ISSUES = 1000;

/** The issues an answer lists: the error's own (at most {@link MAX_LISTED_ISSUES}), or for a limit one issue saying which limit. */
function issuesOf(error: Error & { code: string }): Issue[] {
  const own = (error as { issues?: unknown }).issues;
  if (Array.isArray(own) && own.length > MAX_LISTED_ISSUES) {
    const more = own.length - MAX_LISTED_ISSUES;
    const rest = { code: 'more_problems', path: '', message: `and ${more} more problems` };
    return [...(own.slice(0, MAX_LISTED_ISSUES) as Issue[]), rest];
  }
  if (Array.isArray(own)) return own as Issue[];
  if (isLimitError(error)) return [{ code: error.code, path: '', message: error.message }];
  return [];
}
