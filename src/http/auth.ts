/**
 * Who is asking, and whether the browser rules let the request in: the `Host` check
 * against DNS rebinding, the same-origin rule for every request that changes something, and the
 * principal found from a bearer key, a session cookie or the host's own hook.
 * @module
 */
import type { Principal } from '../access/principal.js';
import type { CredentialStores, SessionInfo } from '../auth/credentials.js';
import type { RequestHead } from './incoming.js';

/** @internal */
export type { CredentialStores, SessionInfo } from '../auth/credentials.js';
import { problem, problemResponse } from './problem.js';

/** How `createHandler` finds out who is asking. */
export interface AuthOptions {
  /**
   * API keys: `Authorization: Bearer sw_...` (keys made with `engine.keys.create`).
   * @default true when the engine has an access policy
   */
  keys?: boolean;
  /**
   * Cookie sessions for screens and the console, made by the sign-in page.
   * @default true when the engine has an access policy
   */
  sessions?: boolean;
  /**
   * For a host that already knows its user (its own session, a gateway's header): the principal
   * of a request, or undefined for none. Asked before keys and sessions; a principal it gives wins.
   */
  principal?: (request: Request) => Principal | undefined | Promise<Principal | undefined>;
  /**
   * Sign-in with an OpenID Connect provider (Google, Keycloak, Authentik, Entra ID...): the sign-in
   * page links to `GET /sign-in/oidc`, the authorization code flow (PKCE, state and nonce) runs
   * through `openid-client`, and the provider's `email` and `groups` claims give the user and its
   * roles. Needs `sessions` (on by default with an access policy).
   */
  oidc?: OidcOptions;
}

/**
 * How `createHandler` signs people in with an OpenID Connect provider. At each sign-in
 * the user with the provider's (verified) `email` is made or updated, with the roles its `groups`
 * give plus `default_roles`: with OpenID Connect, the provider decides the roles.
 * @example
 * ```ts
 * createHandler(engine, {
 *   auth: {
 *     oidc: {
 *       issuer: 'https://accounts.google.com',
 *       client_id: '1234.apps.googleusercontent.com',
 *       client_secret: process.env.OIDC_SECRET,
 *       allowed_domains: ['example.com'],
 *       default_roles: ['sales'],
 *     },
 *   },
 * });
 * ```
 */
export interface OidcOptions {
  /**
   * The provider's issuer identifier, e.g. `https://accounts.google.com` or
   * `https://sso.example.com/realms/staff`; its discovery document is read from
   * `<issuer>/.well-known/openid-configuration` on first use. `http:` only on a loopback host
   * (`127.0.0.1`, `localhost`, `[::1]`), for local development and tests.
   */
  issuer: string;
  /** The client id the provider gave this application. */
  client_id: string;
  /**
   * The client secret (sent with HTTP Basic, `client_secret_basic`); leave it out for a public
   * client, which PKCE alone protects.
   */
  client_secret?: string;
  /**
   * Scopes asked for; must hold `openid`. Add the one that brings the `groups` claim where the
   * provider needs one (Authentik and Keycloak setups often use `groups`).
   * @default ["openid", "email", "profile"]
   */
  scopes?: string[];
  /**
   * The roles each group of the `groups` claim gives: `{ "sales-team": ["sales"] }`. A group not
   * listed gives none.
   * @default {}
   */
  groups?: Record<string, string[]>;
  /**
   * Only these e-mail addresses may sign in (in any case); with `allowed_domains`, an address
   * either list admits may. Leave both out and every address the provider vouches for signs in:
   * with a public provider (Google, Microsoft) always set one.
   */
  allowed_emails?: string[];
  /** Only addresses of these domains may sign in (exactly the part after `@`, no subdomains). */
  allowed_domains?: string[];
  /**
   * Roles every user signed in by the provider holds, besides those of its groups.
   * @default []
   */
  default_roles?: string[];
}

/** Names the request's host answers to without being listed: the loopback ones. */
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** The name of the session cookie: `__Host-` prefixed (so Secure, host-only, path /) under https. @internal */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-stepwire_session' : 'stepwire_session';
}

/**
 * The answer refusing a request whose `Host` is neither loopback nor listed (a DNS-rebinding page
 * reaches a loopback server under its own name), or undefined when it may go on; `url` is the
 * request's.
 * @internal
 */
export function refuseHost(url: URL, allowed: ReadonlySet<string> | undefined): Response | undefined {
  if (allowed === undefined) return undefined;
  const host = url.hostname.toLowerCase();
  if (LOOPBACK.test(host) || allowed.has(host) || allowed.has(url.host.toLowerCase())) return undefined;
  return problemResponse(
    problem(403, 'host_not_allowed', `This server does not answer to the host "${url.host}".`),
  );
}

/**
 * The answer refusing a request that changes something and does not come from this server's own
 * pages, or undefined when it may go on. `Sec-Fetch-Site` must be `same-origin` or `none`
 * (same-site is not enough: another port or a sibling subdomain is same-site); without it, an
 * `Origin` must be one of `origins`; a request with neither (not sent by a browser) passes, and so
 * does one with a bearer key and no cookie. A body-less POST is no exception.
 * @internal
 */
export function refuseCrossSite(
  request: RequestHead,
  method: string,
  origins: readonly string[],
): Response | undefined {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return undefined;
  const headers = request.headers;
  if (bearerOf(request) !== undefined && !headers.has('cookie')) return undefined;
  const site = headers.get('sec-fetch-site');
  if (site !== null) {
    if (site === 'same-origin' || site === 'none') return undefined;
    return crossSite(`the browser says it came from a ${site} page`);
  }
  const origin = headers.get('origin');
  if (origin === null) return undefined;
  if (origins.includes(origin.toLowerCase())) return undefined;
  return crossSite(`it came from ${origin === 'null' ? 'an opaque origin' : origin}`);
}

function crossSite(why: string): Response {
  return problemResponse(
    problem(
      403,
      'cross_site',
      `A request that changes something is only taken from this server's own pages: ${why}. Nothing was done.`,
    ),
  );
}

/** The bearer token of `Authorization`, or undefined. @internal */
export function bearerOf(request: RequestHead): string | undefined {
  const header = request.headers.get('authorization');
  if (header === null) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/** The value of cookie `name`, or undefined. @internal */
export function cookieOf(request: RequestHead, name: string): string | undefined {
  const header = request.headers.get('cookie');
  if (header === null) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Who is asking: the principal, and the session when it came by cookie. @internal */
export interface Identity {
  principal: Principal | undefined;
  session: SessionInfo | undefined;
}

/** How {@link identify} finds the principal. @internal */
export interface IdentifyOptions {
  /** Whether a bearer API key is taken. */
  keys: boolean;
  /** Whether a session cookie is taken. */
  sessions: boolean;
  /**
   * The host's hook, already given the request: the hook takes a web `Request`, which is made
   * only when there is a hook.
   */
  principal: (() => Principal | undefined | Promise<Principal | undefined>) | undefined;
}

/**
 * Finds the principal of a request: the host's hook, then a bearer key, then the session cookie.
 * A bearer token that is no live key answers 401 (it is never taken for "no credentials").
 * @internal
 */
export function identify(
  request: RequestHead,
  auth: IdentifyOptions,
  stores: CredentialStores,
  secure: boolean,
): Identity | Response | Promise<Identity | Response> {
  if (auth.principal) return hooked(request, auth, stores, secure);
  const bearer = auth.keys ? bearerOf(request) : undefined;
  if (bearer !== undefined) {
    // A key checked a moment ago comes back at once: the request waits no turn for it.
    const principal = bearer === '' ? undefined : stores.verifyKey(bearer);
    return principal instanceof Promise ? principal.then(keyIdentity) : keyIdentity(principal);
  }
  return bySession(request, auth, stores, secure);
}

/** The identity of a bearer key's principal; 401 for no live key. */
function keyIdentity(principal: Principal | undefined): Identity | Response {
  if (!principal)
    return unauthorized('The API key is not valid (unknown, revoked or expired).', 'invalid_token');
  return { principal, session: undefined };
}

/** {@link identify} with the host's hook, asked first. */
async function hooked(
  request: RequestHead,
  auth: IdentifyOptions,
  stores: CredentialStores,
  secure: boolean,
): Promise<Identity | Response> {
  const principal = await auth.principal!();
  if (principal !== undefined) return { principal, session: undefined };
  return identify(request, { ...auth, principal: undefined }, stores, secure);
}

/** {@link identify} past the key: the session cookie, or no one. */
async function bySession(
  request: RequestHead,
  auth: IdentifyOptions,
  stores: CredentialStores,
  secure: boolean,
): Promise<Identity | Response> {
  if (auth.sessions) {
    const token = cookieOf(request, sessionCookieName(secure));
    const session = token ? await stores.session(token) : undefined;
    if (session) return { principal: session.principal, session };
  }
  return { principal: undefined, session: undefined };
}

/** 401 with `WWW-Authenticate: Bearer`: credentials are needed (or were not valid). @internal */
export function unauthorized(detail: string, error?: 'invalid_token'): Response {
  return problemResponse(problem(401, 'unauthorized', detail), {
    'www-authenticate': `Bearer realm="stepwire"${error ? `, error="${error}"` : ''}`,
  });
}
