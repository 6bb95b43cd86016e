import type { AuthOptions, OidcOptions } from './auth.js';
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
   * How the handler finds out who is asking: API keys and cookie sessions (both on by
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
  /** OpenID Connect sign-in, checked, when configured. */
  oidc: ResolvedOidc | undefined;
}

/** {@link OidcOptions} checked, with the defaults filled in. @internal */
export interface ResolvedOidc {
  /** The issuer URL as given. */
  issuer: string;
  /** Whether the issuer is an `http:` one (loopback only): its requests are then allowed without TLS. */
  insecure: boolean;
  client_id: string;
  client_secret: string | undefined;
  /** The scopes, space-separated. */
  scope: string;
  groups: ReadonlyMap<string, readonly string[]>;
  /** Lower-case addresses, or undefined when not limited by address. */
  allowed_emails: ReadonlySet<string> | undefined;
  /** Lower-case domains, or undefined when not limited by domain. */
  allowed_domains: ReadonlySet<string> | undefined;
  default_roles: readonly string[];
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
    oidc: checkOidc(options.auth?.oidc, options.auth?.sessions),
  };
}

function checkAuth(auth: AuthOptions | undefined): AuthOptions {
  if (auth === undefined) return {};
  if (typeof auth !== 'object' || auth === null)
    throw new TypeError('auth must be an object: { keys?, sessions?, principal?, oidc? }');
  for (const key of Object.keys(auth))
    if (!['keys', 'sessions', 'principal', 'oidc'].includes(key))
      throw new TypeError(`auth.${key} is not a known option (known: keys, sessions, principal, oidc)`);
  for (const key of ['keys', 'sessions'] as const)
    if (auth[key] !== undefined && typeof auth[key] !== 'boolean')
      throw new TypeError(`auth.${key} must be true or false`);
  if (auth.principal !== undefined && typeof auth.principal !== 'function')
    throw new TypeError('auth.principal must be a function from a request to its principal');
  return auth;
}

const OIDC_KEYS = [
  'issuer',
  'client_id',
  'client_secret',
  'scopes',
  'groups',
  'allowed_emails',
  'allowed_domains',
  'default_roles',
];
/** The hosts an `http:` issuer may have: loopback only. */
const LOOPBACK_HOST = /^(?:localhost|127\.0\.0\.1|\[::1\])$/i;
/** A role, a scope, a group: no spaces or control characters at either end, not empty. */
const NAME = /^\S(?:.*\S)?$/u;

function checkOidc(oidc: OidcOptions | undefined, sessions: boolean | undefined): ResolvedOidc | undefined {
  if (oidc === undefined) return undefined;
  if (typeof oidc !== 'object' || oidc === null || Array.isArray(oidc))
    throw new TypeError('auth.oidc must be an object: { issuer, client_id, client_secret?, ... }');
  if (sessions === false)
    throw new TypeError('auth.oidc signs people in to a session: it cannot go with auth.sessions false');
  for (const key of Object.keys(oidc))
    if (!OIDC_KEYS.includes(key))
      throw new TypeError(`auth.oidc.${key} is not a known option (known: ${OIDC_KEYS.join(', ')})`);
  const issuer = checkIssuer(oidc.issuer);
  const text = (name: string, value: unknown): string => {
    if (typeof value !== 'string' || value === '' || value !== value.trim())
      throw new TypeError(`auth.oidc.${name} must be a non-empty string without spaces at either end`);
    return value;
  };
  const client_id = text('client_id', oidc.client_id);
  const client_secret =
    oidc.client_secret === undefined ? undefined : text('client_secret', oidc.client_secret);
  const scopes = oidc.scopes === undefined ? ['openid', 'email', 'profile'] : names('scopes', oidc.scopes);
  if (scopes.some((scope) => /\s/.test(scope)) || !scopes.includes('openid'))
    throw new TypeError('auth.oidc.scopes must hold "openid", each scope one word: ["openid", "email"]');
  const groups = new Map<string, readonly string[]>();
  if (oidc.groups !== undefined) {
    if (typeof oidc.groups !== 'object' || oidc.groups === null || Array.isArray(oidc.groups))
      throw new TypeError('auth.oidc.groups must map each group to its roles: { "sales-team": ["sales"] }');
    for (const [group, roles] of Object.entries(oidc.groups))
      groups.set(group, names(`groups[${JSON.stringify(group)}]`, roles));
  }
  const emails = oidc.allowed_emails && names('allowed_emails', oidc.allowed_emails);
  if (emails?.some((email) => !/^[^\s@]+@[^\s@]+$/.test(email)))
    throw new TypeError('auth.oidc.allowed_emails must be e-mail addresses: ["ada@example.com"]');
  const domains = oidc.allowed_domains && names('allowed_domains', oidc.allowed_domains);
  if (domains?.some((domain) => !/^[^\s@/]+\.[^\s@/]+$/.test(domain)))
    throw new TypeError('auth.oidc.allowed_domains must be domain names without "@": ["example.com"]');
  const lower = (list: string[] | undefined) => list && new Set(list.map((item) => item.toLowerCase()));
  return {
    issuer: issuer.href,
    insecure: issuer.protocol === 'http:',
    client_id,
    client_secret,
    scope: scopes.join(' '),
    groups,
    allowed_emails: lower(emails),
    allowed_domains: lower(domains),
    default_roles: oidc.default_roles === undefined ? [] : names('default_roles', oidc.default_roles),
  };
}

/** The issuer's URL: https, or http on a loopback host; no query or fragment (OpenID Connect Discovery 2). */
function checkIssuer(issuer: unknown): URL {
  let url: URL | undefined;
  try {
    url = typeof issuer === 'string' ? new URL(issuer) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '')
    throw new TypeError(
      `auth.oidc.issuer must be the provider's https URL without query or fragment, e.g. "https://accounts.google.com", got ${JSON.stringify(issuer)}`,
    );
  if (url.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname))
    throw new TypeError(
      `auth.oidc.issuer must be https: an http issuer is only taken on a loopback host (127.0.0.1, localhost, [::1]), got ${JSON.stringify(issuer)}`,
    );
  return url;
}

/** `list` when it is an array of names (roles, scopes, addresses), else a TypeError naming the option. */
function names(option: string, list: unknown): string[] {
  if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || !NAME.test(item)))
    throw new TypeError(`auth.oidc.${option} must be an array of non-empty strings`);
  return [...(list as string[])];
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
