import type { Engine } from '../engine/engine.js';
import { parse } from '../schema/index.js';
import { setOwn } from '../schema/own.js';
import { toResponse, WholeAnswer, type Answer } from './answer.js';
import { readJson, readScript } from './body.js';
import {
  INCOMING_HANDLER,
  type IncomingHandler,
  type IncomingRequest,
  type RequestMaker,
} from './incoming.js';
import { buildOpenApi } from './openapi.js';
import { resolveHandlerOptions, type HandlerOptions, type ResolvedHandlerOptions } from './options.js';
import { HttpProblem, problem, problemFromError, problemResponse } from './problem.js';
import type { Route, RouteContext } from './route.js';
import { ROUTE_LIST } from './routes.js';
import { identify, refuseCrossSite, refuseHost, unauthorized, type Identity } from './auth.js';
import { renderMessagePage } from '../app/render.js';
import { Router } from './router.js';
import { CONSOLE_PAGES } from './console/routes.js';

/** A web-standard fetch handler: what `createHandler` returns. */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * The HTTP API of an engine as a web-standard fetch handler, for Node (`serve` from `stepwire/node`),
 * Cloudflare Workers, Deno, Bun or any framework that speaks `Request`/`Response`.
 * @example
 * ```ts
 * const handler = createHandler(engine, { basePath: '/api', authorize: (req) => req.headers.get('x-key') === key });
 * export default { fetch: handler };
 * ```
 * @throws TypeError when `engine` is not an Engine.
 */
export function createHandler(engine: Engine, options: HandlerOptions = {}): FetchHandler {
  if (typeof engine !== 'object' || engine === null || typeof (engine as Partial<Engine>).run !== 'function')
    throw new TypeError('createHandler needs an Engine: createHandler(new Engine(), options)');
  const resolved = resolveHandlerOptions(options);
  const router = new Router<Route>(ROUTE_LIST);
  let openapi: unknown;
  const document = () => (openapi ??= buildOpenApi({ basePath: resolved.basePath }));

  async function answer(request: IncomingRequest, made: RequestMaker): Promise<Answer> {
    try {
      const url = request.parsedUrl ?? new URL(request.url);
      const badHost = refuseHost(url, resolved.allowedHosts);
      if (badHost) return badHost;
      let path = url.pathname;
      if (resolved.basePath) {
        if (path !== resolved.basePath && !path.startsWith(`${resolved.basePath}/`)) return notFound(path);
        path = path.slice(resolved.basePath.length) || '/';
      }
      const method = request.method.toUpperCase();
      const match = router.match(method, path);
      if (match.kind === 'none') return notFound(path);
      if (match.kind === 'method') {
        return problemResponse(
          problem(
            405,
            'method_not_allowed',
            `${method} is not allowed on ${path}; allowed: ${match.allow.join(', ')}.`,
          ),
          { allow: match.allow.join(', ') },
        );
      }
      const { route, params } = match;
      const refused = refuseCrossSite(request, method, ownOrigins(url, resolved));
      // A screen's form is answered with a page, as the screens' other refusals are.
      if (refused)
        return SCREEN_ROUTES.has(route.name)
          ? new Response(
              renderMessagePage(
                'Forbidden',
                'A form of this application can only be sent from its own pages.',
              ),
              {
                status: 403,
                headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
              },
            )
          : refused;
      const secure = isSecure(url, resolved);
      let controlled = engine.accessControlled();
      if (controlled instanceof Promise) controlled = await controlled;
      const hook = resolved.auth.principal;
      let identity = identify(
        request,
        {
          keys: resolved.auth.keys ?? controlled,
          sessions: resolved.auth.sessions ?? controlled,
          // The host's hook is given the request itself, as `authorize` and the route are.
          principal: hook && (() => hook(made.request())),
        },
        engine.credentialStores(),
        secure,
      );
      // Awaited only when it is a promise: a key checked a moment ago costs the request no turn.
      if (identity instanceof Promise) identity = await identity;
      if (identity instanceof Response) return identity;
      if (controlled && identity.principal === undefined && !route.public)
        return (SCREEN_ROUTES.has(route.name) || (PAGE_ROUTES.has(route.name) && asksForPage(request))) &&
          method !== 'POST'
          ? signInRedirect(resolved.basePath, url)
          : unauthorized('Sign in: this server needs an API key (Authorization: Bearer) or a session.');
      if (resolved.authorize) {
        const verdict = await resolved.authorize(made.request(), { method, path, name: route.name, params });
        if (verdict instanceof Response) return verdict;
        if (verdict === false)
          return problemResponse(
            problem(403, 'forbidden', `You are not allowed to ${route.name} (${method} ${path}).`),
          );
      }
      return await route.action(
        new Context(
          identity.principal ? engine.as(identity.principal) : engine,
          engine,
          identity,
          request,
          made,
          method === 'HEAD',
          params,
          resolved,
          // Bound, not closures: a request makes no functions it does not need.
          readBody.bind(undefined, route, request, resolved),
          readQuery.bind(undefined, route, url),
          document,
        ),
      );
    } catch (error) {
      const details = problemFromError(error);
      if (details.status === 500) resolved.onError?.(error, made.request());
      return problemResponse(details, error instanceof HttpProblem ? error.headers : {});
    }
  }

  /** The answer to `request`: a `Response` sized, or an answer made whole in memory. */
  async function respond(request: IncomingRequest, made: RequestMaker): Promise<Answer> {
    const answered = await answer(request, made);
    if (answered instanceof WholeAnswer) return answered;
    return sized(answered, request.method.toUpperCase() === 'HEAD');
  }

  const handler = async function stepwireHandler(request: Request): Promise<Response> {
    const answered = await respond(request, { request: () => request });
    if (answered instanceof Response) return answered;
    return toResponse(answered, request.method.toUpperCase() === 'HEAD');
  };
  return Object.defineProperty(handler, INCOMING_HANDLER, { value: respond satisfies IncomingHandler });
}

/**
 * What a route's action is given for one request. A class, not an object literal with getters: V8
 * came to allocate such a literal straight in the old generation (it had seen many survive), where
 * each one, dead as soon as its request was answered, then kept what it pointed to alive through
 * every young collection until the next full one, and most of a request's objects with it.
 */
class Context implements RouteContext<Record<string, string>> {
  #asGet: Request | undefined;

  constructor(
    readonly engine: RouteContext['engine'],
    readonly host: Engine,
    readonly identity: Identity,
    readonly incoming: IncomingRequest,
    readonly made: RequestMaker,
    readonly head: boolean,
    readonly params: Record<string, string>,
    readonly options: ResolvedHandlerOptions,
    readonly body: () => Promise<unknown>,
    readonly query: () => unknown,
    readonly openapi: () => unknown,
  ) {}

  /** The request; a HEAD runs the GET action as it is (only the answer's body is left out). */
  get request(): Request {
    if (!this.head) return this.made.request();
    const head = this.made.request();
    return (this.#asGet ??= new Request(head, { method: 'GET', signal: head.signal }));
  }

  /** Made when a route asks for it: most answer without it. */
  get signal(): AbortSignal {
    return this.incoming.signal;
  }
}

/**
 * The answer with its `Content-Length`. Every answer of the API is made whole in memory, so its
 * length is known; saying it lets Node and other servers send it as is instead of chunked, and gives
 * a HEAD the GET answer's headers, `Content-Length` included (RFC 9110 9.3.2), without the body.
 */
async function sized(response: Response, head: boolean): Promise<Response> {
  // An event stream (progress of an MCP tool call) is sent as it comes.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  if (response.body === null) {
    // An empty answer (a 303 of a form) says so too; 204 and 304 carry no length (RFC 9110 8.6).
    const bodiless = response.status === 204 || response.status === 304 || response.status < 200;
    if (bodiless || response.headers.has('content-length')) return response;
    const headers = new Headers(response.headers);
    headers.set('content-length', '0');
    return new Response(null, { status: response.status, statusText: response.statusText, headers });
  }
  if (response.headers.has('content-length') && !head) return response;
  let body: Uint8Array | null = null;
  const headers = new Headers(response.headers);
  if (!response.headers.has('content-length')) {
    body = new Uint8Array(await response.arrayBuffer());
    headers.set('content-length', String(body.byteLength));
  } else void response.body.cancel().catch(() => {});
  return new Response(head ? null : (body as Uint8Array<ArrayBuffer>), {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

/** The screens: without credentials they send the browser to the sign-in page instead of a 401. */
const SCREEN_ROUTES: ReadonlySet<string> = new Set(['applications.renderScreen', 'applications.submitForm']);

/** Routes that answer a browser with a page (the approvals inbox and pages): it is sent to sign in. */
const PAGE_ROUTES: ReadonlySet<string> = new Set(['approvals.list', 'approvals.get', ...CONSOLE_PAGES]);

/** Whether the request is a browser's asking for a page. */
function asksForPage(request: IncomingRequest): boolean {
  return (request.headers.get('accept') ?? '').includes('text/html');
}

/** The origins a request that changes something may come from: the request's own, and the public URL's. */
function ownOrigins(url: URL, options: ResolvedHandlerOptions): string[] {
  const own = url.origin.toLowerCase();
  return options.publicOrigin && options.publicOrigin !== own ? [own, options.publicOrigin] : [own];
}

/** Whether browsers reach the server over https (cookies are then `Secure` and `__Host-`). */
function isSecure(url: URL, options: ResolvedHandlerOptions): boolean {
  return url.protocol === 'https:' || (options.publicOrigin?.startsWith('https:') ?? false);
}

/** 303 to the sign-in page, which comes back to `url` after signing in. */
function signInRedirect(basePath: string, url: URL): Response {
  const next = `${url.pathname}${url.search}`;
  return new Response(null, {
    status: 303,
    headers: {
      location: `${basePath}/sign-in?next=${encodeURIComponent(next)}`,
      'cache-control': 'no-store',
    },
  });
}

function notFound(path: string): Response {
  return problemResponse(
    problem(404, 'route_not_found', `There is no route ${path}; GET /openapi.json lists every route.`),
  );
}

/** Reads a request body as its route declares it; an empty optional JSON body is `{}`. */
async function readBody(
  route: Route,
  request: IncomingRequest,
  options: ResolvedHandlerOptions,
): Promise<unknown> {
  const spec = route.body;
  if (spec === undefined) return undefined;
  if (spec.media === 'script') return readScript(request, options, !spec.required);
  // Forms answer with HTML pages, so the screen routes read them themselves.
  if (spec.media === 'form') throw new TypeError(`${route.name} reads its own form body`);
  // Only an empty body stands for `{}`: a JSON `null` is a value, checked like any other.
  const read = await readJson(request, options, !spec.required);
  const body = read === undefined ? {} : read;
  return spec.validate ? parse(spec.schema, body, 'request body') : body;
}

/** The query string as the route's `query` schema reads it; a repeated name gives its first value. */
function readQuery(route: Route, url: URL): unknown {
  const query: Record<string, string> = {};
  for (const [key, value] of url.searchParams) if (!Object.hasOwn(query, key)) setOwn(query, key, value);
  return route.query ? parse(route.query, query, 'query') : query;
}
