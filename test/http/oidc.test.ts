// Sign-in with OpenID Connect (DESIGN 18, issue 38 item 4) against a real provider: oidc-provider
// on 127.0.0.1 with its development login and consent pages, and examples/app served by
// createHandler on 127.0.0.1. The flow runs once without a browser (fetch, following each redirect
// and submitting the provider's forms, so it is tested on every machine) and once in Chromium.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { loadProject, serve, type RunningServer } from '../../src/node/index.js';
import type { Engine } from '../../src/index.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';

const chromiumPath = findTool(CHROMIUM);
const CLIENT_ID = 'stepwire';
const CLIENT_SECRET = 'a client secret of the test, long enough for HS256';
const START = '/applications/invoices/screens/start';
/** Every request of the tests is bounded. */
const STEP_TIMEOUT_MS = 5_000;

/** The provider's accounts: the login typed on its development page is the account id. */
const ACCOUNTS: Record<string, Record<string, unknown>> = {
  ada: { email: 'Ada@Example.com', email_verified: true, name: 'Ada', groups: ['sales-team', 'chess-club'] },
  fin: { email: 'fin@example.com', email_verified: true, groups: ['finance-team'] },
  mallory: { email: 'mallory@evil.example', email_verified: true, groups: ['sales-team'] },
  eve: { email: 'eve@example.com', email_verified: false, groups: ['finance-team'] },
};

const OIDC_OPTIONS = {
  client_id: CLIENT_ID,
  client_secret: CLIENT_SECRET,
  scopes: ['openid', 'email', 'profile', 'groups'],
  groups: { 'sales-team': ['sales'], 'finance-team': ['finance'] },
  allowed_domains: ['example.com'],
};

let provider: { url: string; server: Server };
let app: RunningServer;
let engine: Engine;
let handler: (request: Request) => Promise<Response>;

beforeAll(async () => {
  // Both servers listen first, so each knows the other's URL before it is configured.
  const providerServer = createServer();
  await new Promise<void>((resolve) => providerServer.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(providerServer.address() as AddressInfo).port}`;
  app = await serve((request) => handler(request), { hostname: '127.0.0.1', port: 0 });
  const oidc = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${app.url}/sign-in/oidc/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: (_ctx: unknown, sub: string) =>
      ACCOUNTS[sub] && { accountId: sub, claims: () => ({ sub, ...ACCOUNTS[sub] }) },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['a cookie key of the test provider'] },
  });
  providerServer.on('request', oidc.callback());
  provider = { url: issuer, server: providerServer };
  engine = (await loadProject('examples/app')).engine;
  handler = createHandler(engine, { auth: { oidc: { issuer, ...OIDC_OPTIONS } } });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await new Promise((resolve) => {
    provider?.server.close(resolve);
    provider?.server.closeAllConnections();
  });
});

/** A browser's cookies, as far as these tests need them: by name (127.0.0.1 shares them across ports). */
class Jar {
  readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (/;\s*max-age=0/i.test(line) || /;\s*expires=Thu, 01 Jan 1970/i.test(line))
        this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** One request as a browser sends it: its cookies, no redirect followed, within the time limit. */
async function send(jar: Jar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (jar.cookies.size > 0) headers.set('cookie', jar.header());
  const response = await fetch(url, {
    ...init,
    headers,
    redirect: 'manual',
    signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
  });
  jar.take(response);
  return response;
}

/** The first form of a page: its action (absolute) and its fields, hidden ones with their values. */
function formOf(html: string, base: string): { action: string; fields: URLSearchParams } {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error(`no form on the page: ${html.slice(0, 500)}`);
  const fields = new URLSearchParams();
  for (const input of form[2]!.matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    if (name) fields.set(name, value.replace(/&amp;/g, '&'));
  }
  return { action: new URL(form[1]!.replace(/&amp;/g, '&'), base).href, fields };
}

/**
 * Signs in as the provider's account `login` without a browser: from stepwire's `/sign-in/oidc`,
 * through the provider's login and consent forms, to stepwire's answer to the callback (returned,
 * not followed). `callbacks` collects each callback URL the provider sent the browser to.
 */
async function signInWithoutBrowser(
  login: string,
  jar = new Jar(),
  callbacks: string[] = [],
): Promise<{ answer: Response; jar: Jar }> {
  let response = await send(jar, `${app.url}/sign-in/oidc?next=${encodeURIComponent(START)}`);
  for (let step = 0; step < 12; step++) {
    const url = response.url;
    if (url.startsWith(`${app.url}/sign-in/oidc/callback`)) return { answer: response, jar };
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location')!, url).href;
      if (next.startsWith(`${app.url}/sign-in/oidc/callback`)) callbacks.push(next);
      response = await send(jar, next);
    } else if (response.status === 200 && url.startsWith(provider.url)) {
      const { action, fields } = formOf(await response.text(), url);
      if (fields.get('prompt') === 'login') {
        fields.set('login', login);
        fields.set('password', 'any password: the development login takes any');
      }
      response = await send(jar, action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: fields.toString(),
      });
    } else
      throw new Error(`unexpected ${response.status} at ${url}: ${(await response.text()).slice(0, 300)}`);
  }
  throw new Error('the sign-in did not come back to stepwire within 12 steps');
}

const sessionCookie = (jar: Jar) => jar.cookies.get('stepwire_session');

describe('signing in with OpenID Connect, without a browser', () => {
  it('the sign-in page links to the provider', async () => {
    const page = await send(new Jar(), `${app.url}/sign-in?next=${encodeURIComponent(START)}`);
    const html = await page.text();
    expect(html).toContain(`href="/sign-in/oidc?next=${encodeURIComponent(START)}"`);
    expect(html).toContain(`Sign in with ${new URL(provider.url).host}`);
  });

  it('starts with a PKCE S256 challenge, state and nonce, and binds the state to the browser', async () => {
    const jar = new Jar();
    const start = await send(jar, `${app.url}/sign-in/oidc`);
    expect(start.status).toBe(302);
    const target = new URL(start.headers.get('location')!);
    expect(target.origin).toBe(provider.url);
    const params = target.searchParams;
    expect(params.get('response_type')).toBe('code');
    expect(params.get('client_id')).toBe(CLIENT_ID);
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(params.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(params.get('redirect_uri')).toBe(`${app.url}/sign-in/oidc/callback`);
    expect(start.headers.get('set-cookie')).toBe(
      `stepwire_oidc=${params.get('state')}; Path=/; HttpOnly; SameSite=Lax; Max-Age=600`,
    );
  });

  it('signs in: the user is made with the roles of its groups, the session set as the password sign-in sets it, the screen shows her rows', async () => {
    const { answer, jar } = await signInWithoutBrowser('ada');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(START);
    const cookies = answer.headers.getSetCookie();
    expect(cookies[0]).toMatch(/^stepwire_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    expect(cookies[1]).toBe('stepwire_oidc=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
    const user = await engine.users.findByEmail('ada@example.com');
    expect(user).toMatchObject({ email: 'ada@example.com', name: 'Ada', roles: ['sales'], disabled: false });

    const screen = await send(jar, `${app.url}${START}`);
    expect(screen.status).toBe(200);
    const html = await screen.text();
    // The sales rule on owner = {{user.email}}: her customers, never Grace's.
    expect(html).toContain('Ada Lovelace');
    expect(html).not.toContain('Grace Hopper');
    expect(html).toContain('Sign out');

    const audit = await engine.audit.list({ action: 'session.sign_in', principal: user!.id });
    expect(audit.entries.at(-1)).toMatchObject({ outcome: 'success', detail: { method: 'oidc' } });
  });

  it('gives the roles of the groups at every sign-in (finance sees every customer)', async () => {
    const { answer, jar } = await signInWithoutBrowser('fin');
    expect(answer.status).toBe(303);
    expect((await engine.users.findByEmail('fin@example.com'))?.roles).toEqual(['finance']);
    const html = await (await send(jar, `${app.url}${START}`)).text();
    expect(html).toContain('Grace Hopper');
  });

  it('refuses an address outside allowed_domains with 403: no session, no user', async () => {
    const { answer, jar } = await signInWithoutBrowser('mallory');
    expect(answer.status).toBe(403);
    expect(await answer.text()).toContain('mallory@evil.example may not sign in here');
    expect(sessionCookie(jar)).toBeUndefined();
    expect(await engine.users.findByEmail('mallory@evil.example')).toBeUndefined();
    const audit = await engine.audit.list({
      action: 'session.sign_in',
      principal: 'email:mallory@evil.example',
    });
    expect(audit.entries.at(-1)).toMatchObject({
      outcome: 'denied',
      detail: { method: 'oidc', reason: 'not_allowed' },
    });
    // Without a session the screen still sends the browser to sign in.
    expect((await send(jar, `${app.url}${START}`)).status).toBe(303);
  });

  it('refuses a disabled user, whatever the provider says', async () => {
    const user = await engine.users.upsertExternal({ email: 'fin@example.com', roles: ['finance'] });
    await engine.users.disable(user.id);
    const { answer, jar } = await signInWithoutBrowser('fin');
    expect(answer.status).toBe(403);
    expect(await answer.text()).toContain('disabled');
    expect(sessionCookie(jar)).toBeUndefined();
  });

  it('refuses an address the provider says is not verified', async () => {
    const { answer, jar } = await signInWithoutBrowser('eve');
    expect(answer.status).toBe(403);
    expect(sessionCookie(jar)).toBeUndefined();
    expect(await engine.users.findByEmail('eve@example.com')).toBeUndefined();
  });

  it('refuses a replayed callback: a state is used once', async () => {
    const callbacks: string[] = [];
    const { answer, jar } = await signInWithoutBrowser('ada', new Jar(), callbacks);
    expect(answer.status).toBe(303);
    const [callback] = callbacks;
    const state = new URL(callback!).searchParams.get('state')!;
    // The same browser, its flow cookie put back: the stored flow is gone.
    const again = new Jar();
    again.cookies.set('stepwire_oidc', state);
    const replayed = await send(again, callback!);
    expect(replayed.status).toBe(400);
    expect(await replayed.text()).toContain('already used');
    expect(sessionCookie(again)).toBeUndefined();
    expect(jar.cookies.get('stepwire_oidc')).toBeUndefined();
  });

  it('refuses a forged state, and a callback that began in another browser (login CSRF)', async () => {
    // A state stepwire never made, even with a matching cookie.
    const forged = new Jar();
    forged.cookies.set('stepwire_oidc', 'x'.repeat(43));
    const answer = await send(forged, `${app.url}/sign-in/oidc/callback?code=abc&state=${'x'.repeat(43)}`);
    expect(answer.status).toBe(400);
    expect(sessionCookie(forged)).toBeUndefined();

    // The attacker's own sign-in, its callback URL sent to a victim whose browser never began it.
    const attacker = new Jar();
    const callbacks: string[] = [];
    const start = await send(attacker, `${app.url}/sign-in/oidc`);
    let response = start;
    for (let step = 0; step < 12 && callbacks.length === 0; step++) {
      if (response.status >= 300 && response.status < 400) {
        const next = new URL(response.headers.get('location')!, response.url).href;
        if (next.startsWith(`${app.url}/sign-in/oidc/callback`)) callbacks.push(next);
        else response = await send(attacker, next);
      } else {
        const { action, fields } = formOf(await response.text(), response.url);
        fields.set('login', 'ada');
        fields.set('password', 'x');
        response = await send(attacker, action, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: fields.toString(),
        });
      }
    }
    const victim = new Jar();
    const planted = await send(victim, callbacks[0]!);
    expect(planted.status).toBe(400);
    expect(sessionCookie(victim)).toBeUndefined();
    // The flow is bound to the browser that began it: there, and only there, it finishes.
    const own = await send(attacker, callbacks[0]!);
    expect(own.status).toBe(303);
    expect(sessionCookie(attacker)).toBeDefined();
  });

  it('a provider that cannot be reached answers 502, and the next request tries again', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const errors: unknown[] = [];
    const down = createHandler(engine, {
      auth: { oidc: { issuer: `http://127.0.0.1:${port}`, client_id: CLIENT_ID } },
      onError: (error) => errors.push(error),
    });
    const answer = await down(new Request('http://127.0.0.1:8787/sign-in/oidc'));
    expect(answer.status).toBe(502);
    expect(errors).toHaveLength(1);
    expect((await down(new Request('http://127.0.0.1:8787/sign-in/oidc'))).status).toBe(502);
    expect(errors).toHaveLength(2);
  });

  it('without auth.oidc the routes answer 404 and the sign-in page has no provider link', async () => {
    const plain = createHandler(engine);
    expect((await plain(new Request('http://127.0.0.1:8787/sign-in/oidc'))).status).toBe(404);
    expect((await plain(new Request('http://127.0.0.1:8787/sign-in/oidc/callback?state=x'))).status).toBe(
      404,
    );
    expect(await (await plain(new Request('http://127.0.0.1:8787/sign-in'))).text()).not.toContain(
      '/sign-in/oidc',
    );
  });
});

describe('auth.oidc options', () => {
  const make =
    (oidc: Record<string, unknown>, auth: Record<string, unknown> = {}) =>
    () =>
      createHandler(engine, {
        auth: { ...auth, oidc: { issuer: 'https://sso.example.com', client_id: 'app', ...oidc } as never },
      });

  it('takes an http issuer only on a loopback host', () => {
    for (const issuer of ['http://127.0.0.1:9000', 'http://localhost:9000/realms/x', 'http://[::1]:9000'])
      expect(make({ issuer })).not.toThrow();
    for (const issuer of ['http://sso.example.com', 'http://10.0.0.5:8080', 'http://127.0.0.1.nip.io'])
      expect(make({ issuer })).toThrow(
        /auth\.oidc\.issuer must be https: an http issuer is only taken on a loopback host/,
      );
  });

  it('refuses every wrong field with a TypeError naming it', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ issuer: 'not a url' }, /auth\.oidc\.issuer/],
      [{ issuer: 'https://sso.example.com/?x=1' }, /auth\.oidc\.issuer/],
      [{ issuer: 'ftp://sso.example.com' }, /auth\.oidc\.issuer/],
      [{ client_id: '' }, /auth\.oidc\.client_id/],
      [{ client_secret: 42 }, /auth\.oidc\.client_secret/],
      [{ scopes: ['email'] }, /auth\.oidc\.scopes/],
      [{ scopes: 'openid' }, /auth\.oidc\.scopes/],
      [{ groups: ['sales'] }, /auth\.oidc\.groups/],
      [{ groups: { team: 'sales' } }, /auth\.oidc\.groups\["team"\]/],
      [{ allowed_emails: ['not an address'] }, /auth\.oidc\.allowed_emails/],
      [{ allowed_domains: ['@example.com'] }, /auth\.oidc\.allowed_domains/],
      [{ default_roles: [''] }, /auth\.oidc\.default_roles/],
      [{ redirect_uri: 'x' }, /auth\.oidc\.redirect_uri is not a known option/],
    ];
    for (const [oidc, message] of cases) {
      expect(make(oidc), JSON.stringify(oidc)).toThrow(TypeError);
      expect(make(oidc), JSON.stringify(oidc)).toThrow(message);
    }
    expect(make({}, { sessions: false })).toThrow(/auth\.oidc .*auth\.sessions false/);
    expect(() => createHandler(engine, { auth: { oidc: 'https://x' as never } })).toThrow(
      /auth\.oidc must be an object/,
    );
  });
});

describe.skipIf(chromiumPath === undefined)('signing in with OpenID Connect in Chromium', () => {
  it('from a screen, through the sign-in page and the provider, back to the screen with her rows', async () => {
    const browser = await chromium.launch({
      executablePath: chromiumPath!,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      timeout: 30_000,
    });
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${app.url}${START}`);
      await page.waitForURL('**/sign-in?next=*');
      await page.getByRole('link', { name: `Sign in with ${new URL(provider.url).host}` }).click();
      await page.waitForURL(`${provider.url}/interaction/**`);
      await page.locator('input[name="login"]').fill('ada');
      await page.locator('input[name="password"]').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(`${app.url}${START}`);
      expect(await page.locator('tbody tr', { hasText: 'Ada Lovelace' }).count()).toBe(1);
      expect(await page.locator('tbody tr', { hasText: 'Grace Hopper' }).count()).toBe(0);
      const cookies = await context.cookies(app.url);
      const session = cookies.find((cookie) => cookie.name === 'stepwire_session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      expect(cookies.find((cookie) => cookie.name === 'stepwire_oidc')).toBeUndefined();
    } finally {
      await browser.close();
    }
  }, 90_000);
});
