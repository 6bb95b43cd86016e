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
}

/** Handler options with every default filled in. @internal */
export interface ResolvedHandlerOptions {
  basePath: string;
  maxBodyBytes: number;
  maxJsonDepth: number;
  authorize: AuthorizeHook | undefined;
  onError: ((error: unknown, request: Request) => void) | undefined;
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
  };
}
