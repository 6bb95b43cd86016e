import { z } from 'zod';
import type { Engine } from '../engine/engine.js';
import type { EngineView } from '../engine/engine-view.js';
import type { Identity } from './auth.js';

/** What a route acts through: the engine as the principal asking sees it. @internal */
export type RouteEngine = Pick<
  EngineView,
  | 'catalog'
  | 'workflows'
  | 'scripts'
  | 'triggers'
  | 'applications'
  | 'access'
  | 'audit'
  | 'start'
  | 'run'
  | 'getRun'
  | 'getRunText'
  | 'listRuns'
  | 'cancel'
  | 'approvals'
  | 'events'
  | 'retry'
  | 'bulk'
>;
import { runKeyProblem } from '../engine/run-keys.js';
import { LimitError, ValidationError } from '../errors/index.js';
import type { ResolvedHandlerOptions } from './options.js';
import { wholeAnswer, type Answer, type WholeAnswer } from './answer.js';

/** Methods the API uses. @internal */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * How a request body is sent: `json` (`application/json` or any `+json` type), `script` (a
 * transform script's source as `text/plain` or JavaScript) or `form` (an HTML form). @internal
 */
export type BodyMedia = 'json' | 'script' | 'form';

/** The request body of a route. @internal */
export interface RouteBody<S extends z.ZodType = z.ZodType> {
  media: BodyMedia;
  /** The body's shape; its input side is documented. */
  schema: S;
  /** Whether an empty body is refused (400 `missing_body`); an empty optional JSON body is `{}`. */
  required: boolean;
  /** What the body is, for the OpenAPI document. */
  description: string;
  /**
   * Whether the handler checks the body against `schema` before the action gets it (a 400 listing
   * every issue). Leave it off where the engine validates the body itself.
   */
  validate?: boolean;
}

/** A request header a route reads. @internal */
export interface RouteHeader {
  /** Header name as documented, e.g. `Idempotency-Key`. */
  name: string;
  description: string;
  /** The value's shape. @default a string */
  pattern?: string;
}

/** Media type of an answer's body. @internal */
export type ResponseMedia =
  'application/json' | 'text/javascript' | 'text/html' | 'image/svg+xml' | 'text/csv';

/** One answer a route gives, by status. @internal */
export interface RouteResponse<S extends z.ZodType = z.ZodType> {
  description: string;
  /** The body's shape (output side); no schema means no body. */
  schema?: S;
  /** @default "application/json" */
  media?: ResponseMedia;
  /** Headers the answer carries that a client may read, by name: what each holds (OpenAPI `headers`). */
  headers?: Readonly<Record<string, string>>;
}

/** What a route's action gets. @internal */
export interface RouteContext<Params = Record<string, string>, Body = unknown, Query = unknown> {
  /** The engine as the principal asking sees it (`engine.as(p)`), or the engine itself without a policy. */
  engine: RouteEngine;
  /** The engine itself: for what acts as the service whoever asks (a webhook's trigger). */
  host: Engine;
  /** Who is asking, when known. */
  identity: Identity;
  /** The request (for a HEAD, the same request as a GET); made on first use where `serve` gave its own. */
  request: Request;
  /** Aborts when the client goes away: what `request.signal` is, without making the request. */
  signal: AbortSignal;
  /** Path parameters, URL-decoded. */
  params: Params;
  options: ResolvedHandlerOptions;
  /** Reads the request body as the route declares it (media type, size and depth limits, validation). */
  body: () => Promise<Body>;
  /** The query string checked against the route's `query` schema (first value of a repeated name). */
  query: () => Query;
  /** The OpenAPI document, built on first use. */
  openapi: () => unknown;
}

/** The value of a route's path parameters. @internal */
export type ParamsOf<P> = P extends z.ZodType ? z.output<P> : Record<string, never>;

/** The value `query()` gives an action. @internal */
export type QueryOf<Q> = Q extends z.ZodType ? z.output<Q> : Record<string, never>;

/** The value `body()` gives an action. @internal */
export type BodyOf<B> = B extends { media: 'script' }
  ? string
  : B extends { validate: true; schema: infer S extends z.ZodType }
    ? z.output<S>
    : unknown;

/**
 * One operation of the HTTP API, written once: the handler routes and answers with it, the OpenAPI
 * document describes it and the client calls it. @internal
 */
export interface Route<
  Name extends string = string,
  Params extends z.ZodType | undefined = z.ZodType | undefined,
  Query extends z.ZodType | undefined = z.ZodType | undefined,
  Body extends RouteBody | undefined = RouteBody | undefined,
  Responses extends Readonly<Record<number, RouteResponse>> = Readonly<Record<number, RouteResponse>>,
> {
  method: HttpMethod;
  /** Path template, e.g. `/workflows/{name}/runs`; every `{param}` is a key of `params`. */
  path: string;
  /** Operation name, e.g. `workflows.run`: the OpenAPI `operationId`; its first part is the tag. */
  name: Name;
  summary: string;
  description?: string;
  /** Path parameters: an object schema with one string per `{param}`; `.describe()` documents each. */
  params?: Params;
  /** Query parameters: an object schema (one parameter per key) or a record (free-form). */
  query?: Query;
  /** Request headers that change what the route does (documented as header parameters). */
  headers?: readonly RouteHeader[];
  body?: Body;
  /** Every answer other than problem details, by status; 2xx ones are what the client expects. */
  responses: Responses;
  /** Statuses answered with problem details, besides 403 (authorize) and 500 (unexpected). */
  problems: readonly number[];
  /**
   * Answered without credentials also where the engine has an access policy: the OpenAPI document,
   * webhooks (which carry their own signature), the sign-in pages.
   */
  public?: true;
  /** Answers the request. */
  action(context: RouteContext<ParamsOf<Params>, BodyOf<Body>, QueryOf<Query>>): Promise<Answer>;
}

/** The `Location` header of an answer that stored a resource: where it is read. @internal */
export const LOCATION = { Location: 'The path the stored resource is read at.' } as const;

/** Declares a route, keeping its schema types for the client. @internal */
export function defineRoute<
  const Name extends string,
  Params extends z.ZodType | undefined = undefined,
  Query extends z.ZodType | undefined = undefined,
  Body extends RouteBody | undefined = undefined,
  Responses extends Readonly<Record<number, RouteResponse>> = Readonly<Record<number, RouteResponse>>,
>(route: Route<Name, Params, Query, Body, Responses>): Route<Name, Params, Query, Body, Responses> {
  return route;
}

/**
 * A JSON answer. @internal
 * @throws LimitError `response.size` when its JSON would pass what one string can hold (a page of
 * large run records), answered 422 rather than as an unexpected 500.
 */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): WholeAnswer {
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new LimitError(
      'response.size',
      'the answer would be too large to send as JSON; ask for less (a smaller limit or page)',
      {
        cause: error,
      },
    );
  }
  return wholeAnswer(status, text, JSON_TYPE, headers);
}

const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** A JSON answer whose body is JSON text already made (not serialized again). @internal */
export function jsonText(status: number, text: string): WholeAnswer {
  return wholeAnswer(status, text, JSON_TYPE);
}

/** A 204 answer. @internal */
export const noContent = (): Response => new Response(null, { status: 204 });

/** Path parameters of a route naming one resource: `{name}`. @internal */
export function nameParam(resource: string) {
  return z.object({ name: z.string().describe(`${resource} name (URL-encoded)`) });
}

/**
 * The `Idempotency-Key` header of a request, or null without one; a value that is no run key is a
 * 400 naming the header. @internal
 */
export function idempotencyKey(request: Request): string | null {
  const key = request.headers.get('idempotency-key');
  const problem = key === null ? undefined : runKeyProblem(key);
  if (problem)
    throw new ValidationError(
      [{ code: 'invalid_key', path: 'Idempotency-Key', message: `the Idempotency-Key header ${problem}` }],
      `Invalid Idempotency-Key header: it ${problem}`,
    );
  return key;
}

/** The `Idempotency-Key` header of the routes that start runs. @internal */
export const IDEMPOTENCY_KEY: RouteHeader = {
  name: 'Idempotency-Key',
  description:
    'Names this start: a key already used answers the run it started instead of starting another (1 to 255 characters, no control characters).',
};
