import { HTTPError, type KyInstance, type Options as KyOptions } from 'ky';
import type { z } from 'zod';
import { problemErrorFrom } from './client-error.js';
import type { Route } from './route.js';
import { ROUTE_LIST, type AnyRoute, type RouteName } from './routes.js';

type Named<N> = Extract<AnyRoute, { name: N }>;
type SuccessStatus = 200 | 201 | 202 | 203 | 204;

/**
 * What a call of route `R` sends: its path parameters, body and query, typed by its schemas.
 * `[R]` keeps each part from distributing over a union of routes: the three unions' cross product
 * (for the constraint of {@link CallRoute}) grows past what TypeScript can represent.
 * @internal
 */
export type RouteRequest<R> = ([R] extends [{ params?: infer P }]
  ? P extends z.ZodType
    ? { params: z.input<P> }
    : unknown
  : unknown) &
  ([R] extends [{ body?: infer B }]
    ? B extends { schema: infer S extends z.ZodType }
      ? { body: z.input<S> }
      : unknown
    : unknown) &
  ([R] extends [{ query?: infer Q }] ? (Q extends z.ZodType ? { query?: z.input<Q> } : unknown) : unknown);

/** What a call of route `R` answers: the status and the body of one of its 2xx answers. @internal */
export type RouteAnswer<R> = R extends { responses: infer Answers }
  ? {
      [S in keyof Answers & SuccessStatus]: {
        status: S;
        value: Answers[S] extends { schema: infer B extends z.ZodType } ? z.output<B> : undefined;
      };
    }[keyof Answers & SuccessStatus]
  : never;

/** Calls one route of the table by its operation name. @internal */
export type CallRoute = <N extends RouteName>(
  name: N,
  request: RouteRequest<Named<N>>,
  init?: KyOptions,
) => Promise<RouteAnswer<Named<N>>>;

const BY_NAME: ReadonlyMap<string, Route> = new Map(ROUTE_LIST.map((route) => [route.name, route]));

/**
 * The one way the client sends a request: method, path and body media come from the route table;
 * an error answer, or a status the route does not list, throws `HttpProblemError`. @internal
 */
export function createCallRoute(api: KyInstance): CallRoute {
  return async function callRoute(name, request, init = {}) {
    const route = BY_NAME.get(name)!;
    const {
      params = {},
      body,
      query,
    } = request as {
      params?: Record<string, string>;
      body?: unknown;
      query?: Record<string, string>;
    };
    const options: KyOptions = { ...init, method: route.method };
    if (route.body?.media === 'json') options.json = body;
    else if (route.body?.media === 'script') {
      options.body = body as string;
      options.headers = { 'content-type': 'text/plain; charset=utf-8' };
    } else if (route.body)
      throw new TypeError(`the client cannot send the ${route.body.media} body of ${name}`);
    if (query) options.searchParams = query;
    let response: Response;
    try {
      response = await api(fillPath(route, params), options);
    } catch (error) {
      if (error instanceof HTTPError) throw await problemErrorFrom(error.response, error);
      throw error;
    }
    const answer = response.status < 300 ? route.responses[response.status] : undefined;
    if (!answer) throw await problemErrorFrom(response, undefined);
    const value = !answer.schema
      ? undefined
      : (answer.media ?? 'application/json') === 'application/json'
        ? await response.json()
        : await response.text();
    return { status: response.status, value } as RouteAnswer<Named<typeof name>>;
  };
}

/** The route's path with its parameters URL-encoded, relative to the client's base URL. */
function fillPath(route: Route, params: Record<string, string>): string {
  return route.path.slice(1).replace(/\{([^}]+)\}/g, (_, key: string) => {
    const value = params[key];
    if (typeof value !== 'string') throw new TypeError(`${route.name} needs the path parameter "${key}"`);
    // A URL cannot carry these as one segment: they would name another route (`/workflows/` lists).
    if (value === '' || value === '.' || value === '..')
      throw new TypeError(
        `${route.name}: the path parameter "${key}" cannot be ${value === '' ? 'empty' : `"${value}"`}; no resource has that name`,
      );
    return encodeURIComponent(value);
  });
}
