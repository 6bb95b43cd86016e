import { z } from 'zod';
import { escapeHtml } from '../app/render.js';
import { HTML_HEADERS } from './screens.js';
import { SCREEN_STYLES } from '../app/styles.js';
import { readBytes } from './body.js';
import { cookieOf, sessionCookieName } from './auth.js';
import type { ResolvedHandlerOptions } from './options.js';
import { defineRoute, type RouteContext } from './route.js';

/** Headers of the sign-in pages: the screens'. @internal */
export const PAGE_HEADERS = HTML_HEADERS;

/** Largest sign-in form read: an e-mail address, a password and where to go next. */
const MAX_FORM_BYTES = 16 * 1024;

const page = (description: string) => ({ description, media: 'text/html' as const });

/** Routes of signing in and out with a password. @internal */
export const SIGN_IN_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/sign-in',
    name: 'session.signInPage',
    public: true,
    summary: 'The sign-in page',
    description: 'A form for the e-mail address and password; after signing in, the browser goes to `next`.',
    query: z.strictObject({
      next: z.string().optional().describe('Where to go after signing in (a path of this server).'),
    }),
    responses: { 200: page('The page.') },
    problems: [400],
    action: async ({ query, options }) => {
      const { next } = query();
      return signInPage(200, options, safeNext(next, options.basePath));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sign-in',
    name: 'session.signIn',
    public: true,
    summary: 'Sign in with a password',
    description:
      'Checks the e-mail address and password (attempts are limited per account and per address), starts a session (a new id in an `HttpOnly`, `SameSite=Lax` cookie, `Secure` and `__Host-` under https) and redirects (303) to `next`. A wrong address or password answers 401 with the page again; too many attempts 429.',
    body: {
      media: 'form',
      schema: z.record(z.string(), z.string()),
      required: true,
      description: '`email`, `password` and `next`.',
    },
    responses: {
      303: {
        description: 'Signed in: to `next`.',
        headers: { Location: 'Where to go.', 'Set-Cookie': 'The session.' },
      },
      401: page('The e-mail address or password is wrong: the page again.'),
      429: page('Too many attempts: the page again, saying so.'),
    },
    problems: [413, 415],
    action: async (context) => {
      const { host, request, options } = context;
      const form = await readSignInForm(request);
      const next = safeNext(form.get('next') ?? undefined, options.basePath);
      const email = form.get('email') ?? '';
      const address = clientAddress(context);
      const outcome = await host.users.signIn(email, form.get('password') ?? '', { address });
      await host.audit.record({
        principal: outcome.ok
          ? { id: outcome.principal.id, kind: 'user' }
          : { id: `email:${email.trim().toLowerCase().slice(0, 200)}`, kind: 'user' },
        action: 'session.sign_in',
        resource: 'session',
        outcome: outcome.ok ? 'success' : 'denied',
        ...(outcome.ok ? {} : { detail: { reason: outcome.reason } }),
      });
      if (!outcome.ok)
        return signInPage(
          outcome.reason === 'locked' ? 429 : 401,
          options,
          next,
          outcome.reason === 'locked'
            ? 'Too many attempts to sign in. Wait a while and try again.'
            : 'The e-mail address or password is wrong, or the account is disabled.',
          email,
        );
      const session = await host.sessions.create(outcome.principal);
      const secure = isSecure(context);
      return new Response(null, {
        status: 303,
        headers: {
          location: next,
          'cache-control': 'no-store',
          'set-cookie': sessionCookie(secure, session.token, session.expires_at),
        },
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sign-out',
    name: 'session.signOut',
    public: true,
    summary: 'Sign out',
    description:
      'Ends the session everywhere (it is removed from the storage) and redirects (303) to the sign-in page.',
    responses: {
      303: {
        description: 'Signed out: to the sign-in page.',
        headers: { Location: 'The sign-in page.', 'Set-Cookie': 'The cookie removed.' },
      },
    },
    problems: [],
    action: async (context) => {
      const { host, request, options, identity } = context;
      const secure = isSecure(context);
      const token = cookieOf(request, sessionCookieName(secure));
      if (token !== undefined) await host.sessions.end(token);
      if (identity.session)
        await host.audit.record({
          principal: { id: identity.session.principal.id, kind: identity.session.principal.kind },
          action: 'session.sign_out',
          resource: 'session',
          outcome: 'success',
        });
      return new Response(null, {
        status: 303,
        headers: {
          location: `${options.basePath}/sign-in`,
          'cache-control': 'no-store',
          'set-cookie': `${sessionCookieName(secure)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? '; Secure' : ''}`,
        },
      });
    },
  }),
] as const;

/** The session cookie: host-only, HttpOnly, SameSite=Lax, Secure under https, until the session's absolute end. @internal */
export function sessionCookie(secure: boolean, token: string, expiresAt: string): string {
  const maxAge = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
  return `${sessionCookieName(secure)}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? '; Secure' : ''}`;
}

/** Whether the browser reaches the server over https. @internal */
export function isSecure({ request, options }: RouteContext): boolean {
  return new URL(request.url).protocol === 'https:' || (options.publicOrigin?.startsWith('https:') ?? false);
}

/** The address attempts are counted by: what the server saw, else a header a proxy set, else "unknown". */
function clientAddress({ request }: RouteContext): string {
  return request.headers.get('x-stepwire-client-address') ?? 'unknown';
}

/** `next` when it is a path of this server (never another site: `//evil.example` or `https://...`). @internal */
export function safeNext(next: string | undefined, basePath: string): string {
  if (next !== undefined && /^\/(?![/\\])[^\s]*$/.test(next)) return next;
  return `${basePath}/`;
}

async function readSignInForm(request: Request): Promise<URLSearchParams> {
  const bytes = await readBytes(request, MAX_FORM_BYTES);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

/** The sign-in page, with a message when the last attempt failed, and a link to the OpenID provider when there is one. */
function signInPage(
  status: number,
  { basePath, oidc }: ResolvedHandlerOptions,
  next: string,
  message?: string,
  email = '',
): Response {
  const provider = oidc
    ? `<p><a href="${escapeHtml(`${basePath}/sign-in/oidc?next=${encodeURIComponent(next)}`)}">Sign in with ${escapeHtml(new URL(oidc.issuer).host)}</a></p>`
    : '';
  const alert = message ? `<div class="form-error" role="alert"><p>${escapeHtml(message)}</p></div>` : '';
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in</title>
<style>${SCREEN_STYLES}</style>
</head>
<body>
<main>
<h1>Sign in</h1>
<div class="c-form"><form method="post" action="${escapeHtml(`${basePath}/sign-in`)}" aria-label="sign in">${alert}<input type="hidden" name="next" value="${escapeHtml(next)}"><div class="field"><label for="email">E-mail address</label><input type="email" id="email" name="email" autocomplete="username" required value="${escapeHtml(email)}"></div><div class="field"><label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required></div><button type="submit">Sign in</button></form></div>
${provider}</main>
</body>
</html>
`;
  return new Response(body, { status, headers: PAGE_HEADERS });
}
