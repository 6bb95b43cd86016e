// Sign-in over HTTP (DESIGN 18) on examples/app and its access.json: API keys, the sign-in page,
// sessions, the form token, and the browser rules (same origin, Host) tried as an attacker would.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { loadProject } from '../../src/node/index.js';
import type { Engine } from '../../src/index.js';

const ORIGIN = 'http://127.0.0.1:8787';
const PASSWORD = 'correct horse battery staple';

async function server(options: Parameters<typeof createHandler>[1] = {}) {
  const { engine } = await loadProject('examples/app');
  await engine.users.create({ email: 'ada@example.com', name: 'Ada', roles: ['sales'], password: PASSWORD });
  await engine.users.create({ email: 'fin@example.com', roles: ['finance'], password: PASSWORD });
  const handler = createHandler(engine, options);
  const send = (path: string, init: RequestInit = {}) => handler(new Request(`${ORIGIN}${path}`, init));
  return { engine, handler, send };
}

/** Signs in through the page, as a browser does; resolves to the session cookie. */
async function signIn(
  send: (path: string, init?: RequestInit) => Promise<Response>,
  email: string,
  password = PASSWORD,
) {
  const answer = await send('/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: new URLSearchParams({ email, password, next: '/applications/invoices/screens/start' }).toString(),
  });
  return answer;
}

const cookieOf = (answer: Response) => answer.headers.get('set-cookie')!.split(';')[0]!;

async function customerName(engine: Engine, id: number): Promise<unknown> {
  const read = await engine.catalog.getEntity({
    entity_name: 'customers',
    operation: { filters: [{ column: 'id', operator: 'EQUALS', value: id }] },
  });
  return read.body.table.rows?.[0]?.[1];
}

describe('credentials where the engine has an access policy', () => {
  it('the API answers 401 with WWW-Authenticate without credentials, and the screens send the browser to sign in', async () => {
    const { send } = await server();
    const api = await send('/workflows');
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBe('Bearer realm="stepwire"');
    const screen = await send('/applications/invoices/screens/start?x=1');
    expect(screen.status).toBe(303);
    expect(screen.headers.get('location')).toBe(
      `/sign-in?next=${encodeURIComponent('/applications/invoices/screens/start?x=1')}`,
    );
    // The public routes answer: the API's description and the sign-in page.
    expect((await send('/openapi.json')).status).toBe(200);
    expect((await send('/sign-in')).status).toBe(200);
  });

  it('an API key acts as its roles: allowed what they grant, 403 naming the permission otherwise', async () => {
    const { engine, send } = await server();
    const sales = await engine.keys.create({ name: 'sales bot', roles: ['sales'] });
    const auth = { authorization: `Bearer ${sales.secret}` };
    const read = await send('/catalog/entities/customers/read', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(read.status).toBe(200);
    // A key has no e-mail address: the sales rule on {{user.email}} matches no row.
    expect(((await read.json()) as { body: { table: { rows: unknown[] } } }).body.table.rows).toEqual([]);
    const put = await send('/scripts/x.js', {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'text/plain' },
      body: 'log(1)',
    });
    expect(put.status).toBe(403);
    expect(((await put.json()) as { detail: string }).detail).toContain('definitions.write');
  });

  it('a key that is unknown, revoked or expired is 401 invalid_token, never taken for no credentials', async () => {
    const { engine, send } = await server();
    const key = await engine.keys.create({ name: 'old', roles: ['admin'] });
    expect((await send('/workflows', { headers: { authorization: `Bearer ${key.secret}` } })).status).toBe(
      200,
    );
    await engine.keys.revoke(key.id);
    for (const secret of [key.secret, 'sw_nothing', ''] as const) {
      const answer = await send('/workflows', { headers: { authorization: `Bearer ${secret}` } });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });
});

describe('signing in with a password', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie and goes to next; the screen shows only her customers', async () => {
    const { send } = await server();
    const answer = await signIn(send, 'ada@example.com');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/applications/invoices/screens/start');
    const cookie = answer.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^stepwire_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const page = await send('/applications/invoices/screens/start', {
      headers: { cookie: cookieOf(answer) },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Ada Lovelace');
    expect(html).not.toContain('Grace Hopper');
    expect(html).toContain('Sign out');
  });

  it('under https the cookie is __Host- and Secure', async () => {
    const { handler } = await server({
      publicUrl: 'https://app.example.com',
      allowedHosts: ['app.example.com'],
    });
    const answer = await handler(
      new Request('https://app.example.com/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://app.example.com' },
        body: new URLSearchParams({ email: 'ada@example.com', password: PASSWORD }).toString(),
      }),
    );
    expect(answer.headers.get('set-cookie')).toMatch(
      /^__Host-stepwire_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/,
    );
  });

  it('a wrong password is 401 with the page again; too many attempts lock the account (429); each is audited', async () => {
    const { engine, send } = await server();
    const wrong = await signIn(send, 'ada@example.com', 'not the password at all');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('The e-mail address or password is wrong');
    let last = wrong;
    for (let i = 0; i < 6; i++) last = await signIn(send, 'ada@example.com', 'not the password at all');
    expect(last.status).toBe(429);
    // Locked: even the right password waits.
    expect((await signIn(send, 'ada@example.com')).status).toBe(429);
    const { entries } = await engine.audit.list({ action: 'session.sign_in' });
    expect(entries[0]).toMatchObject({
      principal: { id: 'email:ada@example.com', kind: 'user' },
      outcome: 'denied',
      detail: { reason: 'invalid' },
    });
    expect(entries.at(-1)).toMatchObject({ outcome: 'denied', detail: { reason: 'locked' } });
    expect(JSON.stringify(entries)).not.toContain('not the password at all');
  });

  it('a session is a new id at every sign-in, and signing out ends it', async () => {
    const { send } = await server();
    const first = cookieOf(await signIn(send, 'ada@example.com'));
    const second = cookieOf(await signIn(send, 'ada@example.com'));
    expect(first).not.toBe(second);
    const page = await send('/applications/invoices/screens/start', { headers: { cookie: second } });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const out = await send('/sign-out', {
      method: 'POST',
      headers: {
        cookie: second,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: `_csrf=${csrf}`,
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await send('/applications/invoices/screens/start', { headers: { cookie: second } })).status).toBe(
      303,
    );
  });

  it('next never leaves the server', async () => {
    const { send } = await server();
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const answer = await send('/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
        body: new URLSearchParams({ email: 'ada@example.com', password: PASSWORD, next }).toString(),
      });
      expect(answer.headers.get('location')).toBe('/');
    }
  });
});

describe('attacks that worked before sign-in (each must fail now)', () => {
  it("a form posted without the session's token is refused, and nothing is written", async () => {
    const { engine, send } = await server();
    const cookie = cookieOf(await signIn(send, 'ada@example.com'));
    const forged = await send('/applications/invoices/screens/customer/forms/edit?id=1', {
      method: 'POST',
      headers: {
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: 'name=Forged&city=Nowhere',
    });
    expect(forged.status).toBe(403);
    expect(await customerName(engine, 1)).toBe('Ada Lovelace');
    const page = await send('/applications/invoices/screens/customer?id=1', { headers: { cookie } });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
    const real = await send('/applications/invoices/screens/customer/forms/edit?id=1', {
      method: 'POST',
      headers: {
        cookie,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: `_csrf=${csrf}&name=Ada+King&city=London`,
    });
    expect(real.status).toBe(303);
    expect(await customerName(engine, 1)).toBe('Ada King');
  });

  it('a page on another port of the same host (same-site) auto-submitting the add and edit forms is refused', async () => {
    const { engine, send } = await server();
    const cookie = cookieOf(await signIn(send, 'fin@example.com'));
    for (const [path, body] of [
      ['/applications/invoices/screens/start/forms/add', 'id=77&name=Mallory&city=Evil'],
      ['/applications/invoices/screens/customer/forms/edit?id=2', 'name=Mallory&city=Evil'],
    ] as const) {
      const answer = await send(path, {
        method: 'POST',
        headers: {
          cookie,
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': 'same-site',
          origin: 'http://127.0.0.1:9999',
        },
        body,
      });
      expect(answer.status).toBe(403);
    }
    expect(await customerName(engine, 2)).toBe('Grace Hopper');
    expect(await customerName(engine, 77)).toBeUndefined();
  });

  it('a no-cors body-less POST from another origin starts no run (Origin checked when the browser sends no Sec-Fetch-Site)', async () => {
    const { engine, send } = await server();
    const cookie = cookieOf(await signIn(send, 'fin@example.com'));
    for (const headers of [
      { 'sec-fetch-site': 'cross-site', origin: 'http://localhost:8787' },
      { origin: 'http://localhost:8787' },
      { origin: 'null' },
    ]) {
      const answer = await send('/workflows/open_customer/runs', {
        method: 'POST',
        headers: { cookie, ...headers },
      });
      expect(answer.status).toBe(403);
      expect(((await answer.json()) as { code: string }).code).toBe('cross_site');
    }
    expect((await engine.listRuns()).runs).toEqual([]);
  });

  it('a request with a bearer key and no cookie is exempt from the origin rule (it is no browser)', async () => {
    const { engine, send } = await server();
    const key = await engine.keys.create({ name: 'ops', roles: ['admin'] });
    const answer = await send('/scripts/x.js', {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${key.secret}`,
        'content-type': 'text/plain',
        origin: 'http://evil.example',
      },
      body: 'console.log(1)',
    });
    expect(answer.status).toBe(201);
  });

  it('with allowedHosts, a DNS-rebinding page (Host: attacker.example) is refused before anything runs', async () => {
    const { engine, handler } = await server({ allowedHosts: ['app.example.com'] });
    const key = await engine.keys.create({ name: 'ops', roles: ['admin'] });
    const put = (host: string) =>
      handler(
        new Request(`http://${host}/scripts/x.js`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'text/plain' },
          body: 'console.log(1)',
        }),
      );
    const rebound = await put('attacker.example:8787');
    expect(rebound.status).toBe(403);
    expect(((await rebound.json()) as { code: string }).code).toBe('host_not_allowed');
    await expect(engine.scripts.get('x.js')).rejects.toMatchObject({ code: 'not_found' });
    for (const host of ['127.0.0.1:8787', 'localhost:8787', '[::1]:8787', 'app.example.com'])
      expect([200, 201]).toContain((await put(host)).status);
  });
});
