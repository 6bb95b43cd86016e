// From nothing to a signed-in admin in two commands: stepwire init-access, then stepwire serve.
// And the server that is not safe to expose refuses to be exposed.
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inProcess, serveProcess, tempDir, type Served } from './helpers.js';

const temp = tempDir('init-access');
let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
  temp.remove();
});

/** examples/app without its policy: an open project. */
function openApp(name: string): string {
  const app = join(temp.dir, name);
  cpSync('examples/app', app, { recursive: true });
  rmSync(join(app, 'access.json'));
  return app;
}

/** A request with a `Host` header of our choosing (fetch does not let a page set it; a rebinding DNS does). */
function withHost(url: string, host: string, method: string, body: string): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path: '/scripts/evil.js',
        headers: { host, 'content-type': 'text/plain' },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

describe('stepwire init-access', () => {
  it('writes a starting policy and the first admin, whose one-time password is printed once; never overwrites', async () => {
    const app = openApp('first');
    const made = await inProcess(['init-access', app, '--email', 'Admin@Example.com']);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^[\w-]{24}$/);
    const policy = JSON.parse(readFileSync(join(app, 'access.json'), 'utf8')) as {
      roles: Record<string, unknown>;
    };
    expect(Object.keys(policy.roles)).toEqual(['admin', 'editor', 'user']);
    const again = await inProcess(['init-access', app, '--key']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('access.json exists');
    const usage = await inProcess(['init-access', app]);
    expect(usage.code).toBe(2);
  });

  it('then serve needs sign-in: the admin signs in with the printed password and sees the screens', async () => {
    const app = openApp('team');
    const password = (await inProcess(['init-access', app, '--email', 'admin@example.com'])).stdout.trim();
    served = await serveProcess([app, '--port', '0', '--host', '0.0.0.0'], 120_000);
    expect(served.stdout()).toContain('access: sign in at');
    const url = served.url;
    expect((await fetch(`${url}/workflows`, { signal: AbortSignal.timeout(10_000) })).status).toBe(401);
    const signIn = await fetch(`${url}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
      body: new URLSearchParams({
        email: 'admin@example.com',
        password,
        next: '/applications/invoices/screens/start',
      }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const screen = await fetch(`${url}/applications/invoices/screens/start`, {
      headers: { cookie },
      signal: AbortSignal.timeout(10_000),
    });
    expect(screen.status).toBe(200);
    expect(await screen.text()).toContain('Grace Hopper');
    // A DNS-rebinding page reaches the server under its own name: refused before anything runs.
    expect(await withHost(url, `attacker.example:${new URL(url).port}`, 'PUT', 'console.log(1)')).toBe(403);
    await served.stop();
    served = undefined;
  }, 180_000);

  it('serve refuses to listen beyond loopback without an access policy, and says what to do', async () => {
    const app = openApp('open');
    const refused = await inProcess(['serve', app, '--port', '0', '--host', '0.0.0.0', '--memory']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('has no access policy');
    expect(refused.stderr).toContain('stepwire init-access');
  }, 60_000);

  it('an open server on loopback answers a rebinding Host with 403 (it worked before: 201)', async () => {
    const app = openApp('rebind');
    served = await serveProcess([app, '--port', '0', '--memory'], 120_000);
    expect(served.stdout()).toContain('access: none');
    const port = new URL(served.url).port;
    expect(await withHost(served.url, `attacker.example:${port}`, 'PUT', 'console.log(1)')).toBe(403);
    expect(await withHost(served.url, `127.0.0.1:${port}`, 'PUT', 'console.log(1)')).toBe(201);
    await served.stop();
    served = undefined;
  }, 180_000);
});
