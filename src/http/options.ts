import type { AuthOptions } from './auth.js';
/** What {@link HandlerOptions.authorize} is told about the request it decides on. */
export interface RouteInfo {
  /** HTTP method, upper case, as the request came: `HEAD` for a HEAD request, which runs the `GET` route. */
  method: string;
  /** The path below `basePath`, e.g. `/workflows/invoice/runs`. */
  path: string;
  /** Stable name of the operation, e.g. `catalog.registerEntity`, `workflows.run`; the OpenAPI `operationId`. */
  name: string;
  /** Path parameters, URL-decoded. */
  params: Readonly<Record<string, string>>;
}

/**
 * Decides whether a request may go on: `true` or nothing allows it, `false` answers 403 with
 * problem details, and a `Response` is sent as the answer instead (for example a 401 with
 * `WWW-Authenticate`).
 */
export type AuthorizeHook = (
  request: Request,
  route: RouteInfo,
) => boolean | void | Response | Promise<boolean | void | Response>;

/** Options of `createHandler`. */
export interface HandlerOptions {
  /**
   * Path prefix the API is mounted under, e.g. `/api`. Requests outside it get a 404.
   * @default ""
   */
  basePath?: string;
  /**
   * Largest request body, in bytes after any `Content-Encoding` is decoded; counted while the body
   * arrives. A larger body gets a 413.
   * @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Deepest nesting of arrays and objects in a JSON body. A deeper body gets a 400 before it is parsed.
   * @default 64
   */
  maxJsonDepth?: number;
  /** Called for every matched route before its body is read; see {@link AuthorizeHook}. */
  authorize?: AuthorizeHook;
  /**
   * Called with every unexpected error (one that is answered with a generic 500), so you can log it;
   * the answer itself never carries the error's message or stack.
   */
  onError?: (error: unknown, request: Request) => void;
  /**
   * How the handler finds out who is asking (DESIGN 18): API keys and cookie sessions (both on by
   * default when the engine has an access policy), or the host's own `principal(request)`. With an
   * access policy, a request without credentials answers 401 (screens redirect to the sign-in page);
   * without one, every request acts as the engine's service principal.
   */
  auth?: AuthOptions;
  /**
   * Host names (or `host:port`) the handler answers to besides the loopback names: a request whose
   * `Host` is another gets 403, so a DNS-rebinding page cannot reach a server on loopback under its
   * own name. Without it the handler does not check `Host`: the embedding host owns that check.
   */
  allowedHosts?: readonly string[];
  /**
   * The origin the server is reached at by browsers (`https://app.example.com`): requests that change
   * something are also taken from it (besides the request's own origin), and session cookies are
   * `Secure` when it is https.
   */
  publicUrl?: string;
}

/** Handler options with every default filled in. @internal */
export interface ResolvedHandlerOptions {
  basePath: string;
  maxBodyBytes: number;
  maxJsonDepth: number;
  authorize: AuthorizeHook | undefined;
  onError: ((error: unknown, request: Request) => void) | undefined;
  auth: AuthOptions;
  allowedHosts: ReadonlySet<string> | undefined;
  /** The public origin, lower case, when given. */
  publicOrigin: string | undefined;
}

/** Default of {@link HandlerOptions.maxBodyBytes}. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Default of {@link HandlerOptions.maxJsonDepth}. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** Checks the options once and fills in the defaults. @internal */
export function resolveHandlerOptions(options: HandlerOptions): ResolvedHandlerOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('createHandler options must be an object');
  const positive = (name: string, value: number | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
      throw new TypeError(`${name} must be a positive integer, got ${String(value)}`);
    return value;
  };
  let basePath = options.basePath ?? '';
  if (typeof basePath !== 'string') throw new TypeError('basePath must be a string such as "/api"');
  basePath = basePath.replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) basePath = `/${basePath}`;
  if (options.authorize !== undefined && typeof options.authorize !== 'function')
    throw new TypeError('authorize must be a function');
  if (options.onError !== undefined && typeof options.onError !== 'function')
    throw new TypeError('onError must be a function');
  return {
    basePath,
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES),
    maxJsonDepth: positive('maxJsonDepth', options.maxJsonDepth, DEFAULT_MAX_JSON_DEPTH),
    authorize: options.authorize,
    onError: options.onError,
    auth: checkAuth(options.auth),
    allowedHosts: checkHosts(options.allowedHosts),
    publicOrigin: checkPublicUrl(options.publicUrl),
  };
}

function checkAuth(auth: AuthOptions | undefined): AuthOptions {
  if (auth === undefined) return {};
  if (typeof auth !== 'object' || auth === null)
    throw new TypeError('auth must be an object: { keys?, sessions?, principal? }');
  for (const key of Object.keys(auth))
    if (!['keys', 'sessions', 'principal'].includes(key))
      throw new TypeError(`auth.${key} is not a known option (known: keys, sessions, principal)`);
  for (const key of ['keys', 'sessions'] as const)
    if (auth[key] !== undefined && typeof auth[key] !== 'boolean')
      throw new TypeError(`auth.${key} must be true or false`);
  if (auth.principal !== undefined && typeof auth.principal !== 'function')
    throw new TypeError('auth.principal must be a function from a request to its principal');
  return auth;
}

function checkHosts(hosts: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (hosts === undefined) return undefined;
  if (!Array.isArray(hosts) || hosts.some((h) => typeof h !== 'string' || h === '' || /[\s/]/.test(h)))
    throw new TypeError(
      'allowedHosts must be an array of host names (or host:port), e.g. ["app.example.com"]',
    );
  return new Set(hosts.map((h) => h.toLowerCase()));
}

function checkPublicUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new TypeError(
      `publicUrl must be an http or https URL, e.g. "https://app.example.com", got ${JSON.stringify(url)}`,
    );
  return parsed.origin.toLowerCase();
}
