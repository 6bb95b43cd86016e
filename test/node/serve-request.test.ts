// What the host's hooks and the routes are given under `serve`, which answers from Node's request
// and makes a web `Request` only for what asks for one; and the checks of who is asking (Host,
// cross-site, API key, session), which read Node's request itself, answering as they do for a
// `Request`.
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/access/principal.js';
import { createHandler, type HandlerOptions } from '../../src/http/index.js';
import { Engine, MemorySpreadsheets, type AccessPolicy } from '../../src/index.js';
import { serve, type RunningServer } from '../../src/node/serve.js';
import { customersEntity } from '../fixtures.js';

const PASSWORD = 'correct horse battery staple';
const ADA: Principal = { id: 'ada', kind: 'user', roles: ['sales'] };
const policy: AccessPolicy = { roles: { sales: { grants: ['entity.read:customers'] } } };

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** An engine with an access policy, its customers, and a user who signs in with a password. */
async function start(options: HandlerOptions = {}) {
  const engine = new Engine({
    spreadsheets: new MemorySpreadsheets({
      shop: {
        customers: [
          ['id', 'name', 'city'],
          [1, 'Ada', 'London'],
          [2, 'Grace', 'Arlington'],
        ],
      },
    }),
    access: policy,
  });
  await engine.catalog.registerEntity(customersEntity);
  await engine.users.create({ email: 'ada@example.com', roles: ['sales'], password: PASSWORD });
  server = await serve(createHandler(engine, options));
  return { engine, url: server.url };
}

/** Reads the customers through the API with `headers`. */
function readCustomers(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/catalog/entities/customers/read`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 2 }] } }),
  });
}

/** The rows of a read's answer. */
async function rows(answer: Response): Promise<unknown[]> {
  return ((await answer.json()) as { body: { table: { rows: unknown[] } } }).body.table.rows;
}

describe('serve and the principal hook', () => {
  it('gives the hook a Request with the URL, method and headers as sent, and the same object to authorize and the route', async () => {
    const hooked: Request[] = [];
    const authorized: Request[] = [];
    const { url } = await start({
      auth: {
        principal: (request) => {
          hooked.push(request);
          return request.headers.get('x-user') === 'ada' ? ADA : undefined;
        },
      },
      authorize: (request, route) => {
        authorized.push(request);
        // The approvals inbox answers a browser with its page. The headers replaced here are an own
        // property of this object, which no copy of the request carries: the route must be given it.
        if (route.name === 'approvals.list') {
          const headers = new Headers(request.headers);
          headers.set('accept', 'text/html');
          Object.defineProperty(request, 'headers', { value: headers });
        }
      },
    });

    const read = await readCustomers(`${url}`, { 'x-user': 'ada', 'x-trace': 'a1' });
    expect(read.status).toBe(200);
    expect(await rows(read)).toEqual([[2, 'Grace', 'Arlington']]);
    expect(hooked).toHaveLength(1);
    const request = hooked[0]!;
    expect(request).toBeInstanceOf(Request);
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`${url}/catalog/entities/customers/read`);
    expect(request.headers.get('x-user')).toBe('ada');
    expect(request.headers.get('x-trace')).toBe('a1');
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(authorized).toEqual([request]);
    expect(authorized[0]).toBe(request);

    const inbox = await fetch(`${url}/approvals?box=1`, {
      headers: { 'x-user': 'ada', accept: 'application/json' },
    });
    expect(inbox.status).toBe(200);
    expect(inbox.headers.get('content-type')).toContain('text/html');
    expect(hooked[1]!.url).toBe(`${url}/approvals?box=1`);
    expect(hooked[1]!.method).toBe('GET');
    expect(authorized[1]).toBe(hooked[1]);
  });

  it('answers 401 when the hook gives no principal and no key or session comes', async () => {
    const hooked: Request[] = [];
    const { url } = await start({
      auth: {
        principal: (request) => {
          hooked.push(request);
          return undefined;
        },
      },
    });
    const answer = await readCustomers(url);
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="stepwire"');
    expect(hooked).toHaveLength(1);
    expect(hooked[0]).toBeInstanceOf(Request);
  });
});

describe('serve and the checks of who is asking, without a hook', () => {
  it('takes an API key, refuses one that is not, and answers 401 without credentials', async () => {
    const { engine, url } = await start();
    const key = await engine.keys.create({ name: 'bot', roles: ['sales'] });
    const read = await readCustomers(url, { authorization: `Bearer ${key.secret}` });
    expect(read.status).toBe(200);
    expect(await rows(read)).toEqual([[2, 'Grace', 'Arlington']]);

    const forged = await readCustomers(url, { authorization: 'Bearer sw_not-a-key' });
    expect(forged.status).toBe(401);
    expect(forged.headers.get('www-authenticate')).toBe('Bearer realm="stepwire", error="invalid_token"');

    const none = await readCustomers(url);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="stepwire"');
  });

  it('takes a session cookie from its own pages and refuses it from another site', async () => {
    const { url } = await start();
    const signIn = await fetch(`${url}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ email: 'ada@example.com', password: PASSWORD }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie).toMatch(/^stepwire_session=/);

    const own = await readCustomers(url, { cookie, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(200);
    expect(await rows(own)).toEqual([[2, 'Grace', 'Arlington']]);

    const crossSite = await readCustomers(url, { cookie, 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { code: string }).code).toBe('cross_site');
    const otherOrigin = await readCustomers(url, { cookie, origin: 'http://evil.example' });
    expect(otherOrigin.status).toBe(403);
    expect(((await otherOrigin.json()) as { code: string }).code).toBe('cross_site');
  });

  it('with allowedHosts, refuses a Host it does not answer to', async () => {
    const { engine, url } = await start({ allowedHosts: ['app.example.com'] });
    const key = await engine.keys.create({ name: 'bot', roles: ['sales'] });
    const { hostname, port } = new URL(url);
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            hostname,
            port,
            path: '/catalog/entities/customers',
            headers: { host, authorization: `Bearer ${key.secret}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        req.end();
      });
    expect(await status('attacker.example')).toBe(403);
    expect(await status('app.example.com')).toBe(200);
    expect(await status(`127.0.0.1:${port}`)).toBe(200);
  });
});
