/**
 * Sign-in with an OpenID Connect provider: the authorization code flow with PKCE (S256),
 * state and nonce, through `openid-client`. What the callback needs (verifier, nonce, redirect URI,
 * `next`) waits in the engine's storage (collection `oidc_flows`, under the SHA-256 of the state),
 * so any process on the database can finish the flow, once; a short-lived cookie holding the state
 * binds the flow to the browser that began it (a callback link sent to someone else signs nobody in).
 * @module
 */
import type * as OpenId from 'openid-client';
import { z } from 'zod';
import { importOptional } from '../adapters/import-optional.js';
import { renderMessagePage } from '../app/render.js';
import { tokenDigest } from '../auth/tokens.js';
import type { Engine } from '../engine/engine.js';
import { cookieOf } from './auth.js';
import type { ResolvedOidc } from './options.js';
import { defineRoute, type RouteContext } from './route.js';
import { PAGE_HEADERS, isSecure, safeNext, sessionCookie } from './sign-in-routes.js';

/** How long a sign-in may stay at the provider before its callback is refused. */
const FLOW_MS = 10 * 60_000;
/** Seconds any request to the provider may take (openid-client's `timeout`). */
const PROVIDER_TIMEOUT_S = 10;
/** Expired flows (sign-ins abandoned at the provider) are swept at most this often per handler. */
const SWEEP_MS = 60_000;

/** What waits in collection `oidc_flows` between the two routes. */
interface StoredFlow {
  verifier: string;
  nonce: string;
  redirect_uri: string;
  next: string;
  expires_at: number;
}

const page = (description: string) => ({ description, media: 'text/html' as const });

/** Routes of signing in with an OpenID Connect provider (`auth.oidc`). @internal */
export const OIDC_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/sign-in/oidc',
    name: 'session.oidcStart',
    public: true,
    summary: 'Sign in with the OpenID Connect provider',
    description:
      "Sends the browser (302) to the provider's authorization endpoint (code flow with a PKCE S256 challenge, state and nonce); the provider sends it back to `/sign-in/oidc/callback`. 404 where `auth.oidc` is not configured.",
    query: z.strictObject({
      next: z.string().optional().describe('Where to go after signing in (a path of this server).'),
    }),
    responses: {
      302: {
        description: 'To the provider.',
        headers: {
          Location: "The provider's authorization URL.",
          'Set-Cookie': 'Binds the sign-in to this browser.',
        },
      },
      404: page('OpenID Connect sign-in is not configured.'),
      502: page('The provider could not be reached.'),
    },
    problems: [400],
    action: async (context) => {
      const { host, options, query } = context;
      const oidc = options.oidc;
      if (!oidc) return messagePage(404, 'Not found', 'Sign-in with OpenID Connect is not set up here.');
      const next = safeNext(query().next, options.basePath);
      const client = await openIdClient();
      const config = await configurationOf(oidc, context);
      if (config instanceof Response) return config;
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const redirectUri = `${publicOrigin(context)}${options.basePath}/sign-in/oidc/callback`;
      await sweep(host, oidc);
      const flow: StoredFlow = {
        verifier,
        nonce,
        redirect_uri: redirectUri,
        next,
        expires_at: Date.now() + FLOW_MS,
      };
      await host.options.storage.put('oidc_flows', await tokenDigest(state), flow);
      const target = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: oidc.scope,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const secure = isSecure(context);
      return new Response(null, {
        status: 302,
        headers: {
          location: target.href,
          'cache-control': 'no-store',
          'set-cookie': `${flowCookieName(secure)}=${state}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${FLOW_MS / 1000}${secure ? '; Secure' : ''}`,
        },
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/sign-in/oidc/callback',
    name: 'session.oidcCallback',
    public: true,
    summary: 'Where the OpenID Connect provider sends the browser back',
    description:
      "Checks the state (against the browser's cookie and the stored flow, used once), exchanges the code (PKCE verifier, nonce, ID token checked by openid-client), takes the verified `email` and the `groups` claims, refuses an address outside `allowed_emails`/`allowed_domains` (403), makes or updates the user with the roles its groups give plus `default_roles`, starts a session as the password sign-in does and redirects (303) to `next`.",
    query: z.record(z.string(), z.string()),
    responses: {
      303: {
        description: 'Signed in: to `next`.',
        headers: { Location: 'Where to go.', 'Set-Cookie': 'The session.' },
      },
      400: page(
        'The sign-in is unknown, expired, already used, or not from this browser; or the provider refused it.',
      ),
      403: page('The address may not sign in here (or its user is disabled).'),
      404: page('OpenID Connect sign-in is not configured.'),
      502: page('The provider could not be reached.'),
    },
    problems: [],
    action: async (context) => {
      const { host, options, request } = context;
      const oidc = options.oidc;
      if (!oidc) return messagePage(404, 'Not found', 'Sign-in with OpenID Connect is not set up here.');
      const url = new URL(request.url);
      const secure = isSecure(context);
      const state = url.searchParams.get('state') ?? '';
      const bound = cookieOf(request, flowCookieName(secure));
      const flow = state !== '' && bound === state ? await takeFlow(host, state) : undefined;
      if (!flow)
        return refused(
          secure,
          400,
          'Sign-in did not finish',
          'This sign-in is unknown, has expired, was already used, or began in another browser. Start again from the sign-in page.',
        );
      if (url.searchParams.has('error'))
        return refused(
          secure,
          400,
          'Sign-in did not finish',
          `The provider did not sign you in (${url.searchParams.get('error')}).`,
        );
      const client = await openIdClient();
      const config = await configurationOf(oidc, context);
      if (config instanceof Response) return config;
      let claims: Record<string, unknown>;
      try {
        // The callback URL as the provider was told it (behind a proxy the request's own URL differs).
        const current = new URL(flow.redirect_uri);
        current.search = url.search;
        const tokens = await client.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: flow.verifier,
          expectedState: state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
        claims = { ...tokens.claims() };
        // Providers that keep the ID token small (oidc-provider, Authentik) give the rest at userinfo.
        if (
          (claims['email'] === undefined || claims['groups'] === undefined) &&
          config.serverMetadata().userinfo_endpoint
        )
          claims = {
            ...(await client.fetchUserInfo(config, tokens.access_token, String(claims['sub']))),
            ...claims,
          };
      } catch (error) {
        options.onError?.(error, request);
        return refused(
          secure,
          400,
          'Sign-in did not finish',
          "The provider's answer could not be checked. Start again from the sign-in page.",
        );
      }
      return signIn(context, oidc, claims, flow.next, secure);
    },
  }),
] as const;

/** Makes or updates the user the claims name and starts its session; or refuses the address. */
async function signIn(
  context: RouteContext,
  oidc: ResolvedOidc,
  claims: Record<string, unknown>,
  next: string,
  secure: boolean,
): Promise<Response> {
  const { host } = context;
  const email = typeof claims['email'] === 'string' ? claims['email'].trim().toLowerCase() : '';
  const verified = claims['email_verified'] !== false && claims['email_verified'] !== 'false';
  const audit = (id: string, reason?: string) =>
    host.audit.record({
      principal: { id, kind: 'user' },
      action: 'session.sign_in',
      resource: 'session',
      outcome: reason ? 'denied' : 'success',
      detail: reason ? { method: 'oidc', reason } : { method: 'oidc' },
    });
  if (email === '' || !verified) {
    await audit(
      `oidc:${String(claims['sub']).slice(0, 200)}`,
      email === '' ? 'no_email' : 'email_not_verified',
    );
    return refused(
      secure,
      403,
      'Forbidden',
      'The provider gave no verified e-mail address, so you cannot sign in here.',
    );
  }
  if (!allowed(oidc, email)) {
    await audit(`email:${email.slice(0, 200)}`, 'not_allowed');
    return refused(secure, 403, 'Forbidden', `The address ${email} may not sign in here.`);
  }
  const name = typeof claims['name'] === 'string' ? claims['name'] : undefined;
  const user = await host.users.upsertExternal({ email, name, roles: rolesOf(oidc, claims['groups']) });
  if (user.disabled) {
    await audit(user.id, 'disabled');
    return refused(secure, 403, 'Forbidden', 'This account is disabled.');
  }
  const session = await host.sessions.create({
    id: user.id,
    kind: 'user',
    roles: user.roles,
    email: user.email,
    ...(user.name === undefined ? {} : { name: user.name }),
  });
  await audit(user.id);
  const headers = new Headers({ location: next, 'cache-control': 'no-store' });
  headers.append('set-cookie', sessionCookie(secure, session.token, session.expires_at));
  headers.append('set-cookie', clearFlowCookie(secure));
  return new Response(null, { status: 303, headers });
}

/** Whether `allowed_emails` or `allowed_domains` admit the address (both absent: every address). */
function allowed(oidc: ResolvedOidc, email: string): boolean {
  if (!oidc.allowed_emails && !oidc.allowed_domains) return true;
  const domain = email.slice(email.lastIndexOf('@') + 1);
  return (oidc.allowed_emails?.has(email) ?? false) || (oidc.allowed_domains?.has(domain) ?? false);
}

/** The roles the `groups` claim (a list, or one name) gives, with the default roles. */
function rolesOf(oidc: ResolvedOidc, groups: unknown): string[] {
  const list = Array.isArray(groups) ? groups : typeof groups === 'string' ? [groups] : [];
  const roles = new Set(oidc.default_roles);
  for (const group of list)
    if (typeof group === 'string') for (const role of oidc.groups.get(group) ?? []) roles.add(role);
  return [...roles];
}

/** The flow of `state`, deleted as it is read (a state is used once), unless expired. */
async function takeFlow(host: Engine, state: string): Promise<StoredFlow | undefined> {
  await host.ready();
  const key = await tokenDigest(state);
  const flow = await host.options.storage.get<StoredFlow>('oidc_flows', key);
  // Whoever deletes it finishes the flow: two callbacks racing with one state get one sign-in.
  if (!flow || !(await host.options.storage.delete('oidc_flows', key))) return undefined;
  return flow.expires_at > Date.now() ? flow : undefined;
}

const swept = new WeakMap<ResolvedOidc, number>();

/** Deletes the flows abandoned at the provider, at most once a minute per handler. */
async function sweep(host: Engine, oidc: ResolvedOidc): Promise<void> {
  await host.ready();
  const now = Date.now();
  if (now - (swept.get(oidc) ?? 0) < SWEEP_MS) return;
  swept.set(oidc, now);
  for (const { key, value } of await host.options.storage.list<StoredFlow>('oidc_flows'))
    if (!(value.expires_at > now)) await host.options.storage.delete('oidc_flows', key);
}

/** The discovered configuration, one per handler, read on first use; a failure is not kept. */
const configurations = new WeakMap<ResolvedOidc, Promise<OpenId.Configuration>>();

async function configurationOf(
  oidc: ResolvedOidc,
  { request, options }: RouteContext,
): Promise<OpenId.Configuration | Response> {
  let config = configurations.get(oidc);
  if (!config) {
    config = discover(oidc);
    configurations.set(oidc, config);
  }
  try {
    return await config;
  } catch (error) {
    if (configurations.get(oidc) === config) configurations.delete(oidc);
    options.onError?.(error, request);
    return messagePage(
      502,
      'Sign-in unavailable',
      'The sign-in provider could not be reached. Try again in a moment.',
    );
  }
}

async function discover(oidc: ResolvedOidc): Promise<OpenId.Configuration> {
  const client = await openIdClient();
  return client.discovery(
    new URL(oidc.issuer),
    oidc.client_id,
    undefined,
    oidc.client_secret === undefined ? client.None() : client.ClientSecretBasic(oidc.client_secret),
    {
      timeout: PROVIDER_TIMEOUT_S,
      ...(oidc.insecure ? { execute: [client.allowInsecureRequests] } : {}),
    },
  );
}

let library: Promise<typeof OpenId> | undefined;

function openIdClient(): Promise<typeof OpenId> {
  return (library ??= importOptional('openid-client', 'auth.oidc', () => import('openid-client')).catch(
    (error: unknown) => {
      library = undefined;
      throw error;
    },
  ));
}

/** The origin browsers reach the server at: the public URL's, else the request's. */
function publicOrigin({ request, options }: RouteContext): string {
  return options.publicOrigin ?? new URL(request.url).origin;
}

/** The cookie binding a sign-in under way to its browser: `__Host-` prefixed under https. */
function flowCookieName(secure: boolean): string {
  return secure ? '__Host-stepwire_oidc' : 'stepwire_oidc';
}

function clearFlowCookie(secure: boolean): string {
  return `${flowCookieName(secure)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** A refusal page that also forgets the browser's flow cookie. */
function refused(secure: boolean, status: number, title: string, message: string): Response {
  const answer = messagePage(status, title, message);
  answer.headers.append('set-cookie', clearFlowCookie(secure));
  return answer;
}

function messagePage(status: number, title: string, message: string): Response {
  return new Response(renderMessagePage(title, message), { status, headers: PAGE_HEADERS });
}
