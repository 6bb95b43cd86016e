import { describe, expect, it } from 'vitest';
import { handleScreenRoute } from '../../src/http/screens.js';
import { appEngine } from './helpers.js';

const BASE = 'http://localhost/api';

function get(path: string) {
  return new Request(`${BASE}${path}`);
}

function post(
  path: string,
  body: string | FormData,
  type: string | null = 'application/x-www-form-urlencoded',
) {
  const headers: Record<string, string> = typeof body === 'string' && type ? { 'content-type': type } : {};
  return new Request(`${BASE}${path}`, { method: 'POST', body, headers });
}

describe('handleScreenRoute', () => {
  it('GET renders the screen as HTML with the security headers', async () => {
    const { engine } = await appEngine();
    const response = await handleScreenRoute(
      engine,
      get('/applications/shop/screens/orders?customer=%3Cb%3E'),
      { app: 'shop', screen: 'orders' },
      { basePath: '/api' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).toContain('<h1>Orders of customer &lt;b&gt;</h1>');
    expect(html).toContain('href="/api/applications/shop/screens/orders?customer=%3Cb%3E&amp;grid_page=2"');
  });

  it('GET of an unknown app or screen is a 404 HTML page', async () => {
    const { engine } = await appEngine();
    for (const params of [
      { app: 'nope', screen: 'start' },
      { app: 'shop', screen: '<x>' },
    ]) {
      const response = await handleScreenRoute(engine, get('/x'), params, {});
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await response.text();
      expect(html).toContain('<h1>Not found</h1>');
      expect(html).not.toContain('<x>');
    }
  });

  it('POST answers 303 to the redirect under the base path', async () => {
    const { engine } = await appEngine();
    const response = await handleScreenRoute(
      engine,
      post('/applications/shop/screens/start/forms/lookup', 'customer_id=3'),
      { app: 'shop', screen: 'start', form: 'lookup' },
      { basePath: '/api' },
    );
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(
      '/api/applications/shop/screens/orders?customer=3&count=15',
    );
  });

  it('POST accepts multipart/form-data and carries the screen query into the redirect', async () => {
    const { engine } = await appEngine();
    const form = new FormData();
    form.set('note', 'a b');
    form.set('amount', '4');
    const response = await handleScreenRoute(
      engine,
      post('/applications/shop/screens/notes/forms/add?who=Zo%C3%AB', form),
      { app: 'shop', screen: 'notes', form: 'add' },
      {},
    );
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/applications/shop/screens/notes?who=a%20b&from=Zo%C3%AB');
  });

  it('POST with a bad value answers 422 with the screen re-rendered and the error next to the item', async () => {
    const { engine } = await appEngine();
    const response = await handleScreenRoute(
      engine,
      post('/applications/shop/screens/start/forms/lookup', 'customer_id=%3Cscript%3E'),
      { app: 'shop', screen: 'start', form: 'lookup' },
      {},
    );
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toContain('value="&lt;script&gt;"');
    expect(html).toContain(
      '<p class="field-error" id="f-lookup-0-error">Customer must be a number, got &quot;&lt;script&gt;&quot;</p>',
    );
    expect(html).not.toMatch(/<script/i);
  });

  it('POST of a workflow that fails answers 422 with the error on the form', async () => {
    const { engine } = await appEngine();
    const response = await handleScreenRoute(
      engine,
      post('/applications/shop/screens/notes/forms/boom', 'n=1'),
      { app: 'shop', screen: 'notes', form: 'boom' },
      {},
    );
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toMatch(
      /role="alert"[^>]*><p>Something went wrong while processing this form\. Reference: run [0-9a-f-]{36}\./,
    );
    // Engine internals stay out of the page; the run record keeps them.
    expect(html).not.toContain('the ledger is locked');
    const id = /Reference: run ([0-9a-f-]{36})/.exec(html)![1]!;
    expect((await engine.getRun(id)).error?.message).toContain('the ledger is locked');
  });

  it('POST to a closed engine answers 503, as the API does, and runs nothing', async () => {
    const { engine } = await appEngine();
    await engine.close();
    const response = await handleScreenRoute(
      engine,
      post('/applications/shop/screens/start/forms/lookup', 'customer_id=3'),
      { app: 'shop', screen: 'start', form: 'lookup' },
      {},
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toMatch(/shutting down/);
    expect((await engine.listRuns()).runs).toEqual([]);
  });

  it('POST whose redirect cannot be built answers 422 with the screen re-rendered, values kept', async () => {
    const { engine } = await appEngine();
    const response = await handleScreenRoute(
      engine,
      post('/applications/shop/screens/notes/forms/extra', 'note=kept&amount=7'),
      { app: 'shop', screen: 'notes', form: 'extra' },
      {},
    );
    expect(response.status).toBe(422);
    const html = await response.text();
    expect(html).toMatch(
      /role="alert"[^>]*><p>Something went wrong while processing this form\. Reference: run [0-9a-f-]{36}\./,
    );
    expect(html).toContain('value="kept"');
    expect(html).toContain('value="7"');
  });

  it('refuses other encodings, oversized bodies, unknown forms and wrong methods', async () => {
    const { engine } = await appEngine();
    const params = { app: 'shop', screen: 'start', form: 'lookup' };
    expect(
      (await handleScreenRoute(engine, post('/f', '{"customer_id":1}', 'application/json'), params, {}))
        .status,
    ).toBe(415);
    expect(
      (
        await handleScreenRoute(engine, post('/f', `customer_id=${'1'.repeat(200)}`), params, {
          maxBodyBytes: 100,
        })
      ).status,
    ).toBe(413);
    expect(
      (await handleScreenRoute(engine, post('/f', 'customer_id=1'), { ...params, form: 'title' }, {})).status,
    ).toBe(404);
    const wrong = await handleScreenRoute(engine, get('/f'), params, {});
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'POST']);
    expect(
      (await handleScreenRoute(engine, post('/f', 'a=1'), { app: 'shop', screen: 'start' }, {})).status,
    ).toBe(405);
  });

  it('redirects never leave the app, whatever the output or query holds', async () => {
    const { engine } = await appEngine();
    for (const note of [
      '//evil.com',
      'https://evil.com',
      '/screens/../x',
      'javascript:alert(1)',
      '\r\nSet-Cookie: a=b',
    ]) {
      const response = await handleScreenRoute(
        engine,
        post('/f?who=%2F%2Fevil.com', `note=${encodeURIComponent(note)}&amount=1`),
        { app: 'shop', screen: 'notes', form: 'add' },
        {},
      );
      expect(response.status).toBe(303);
      const location = response.headers.get('location')!;
      expect(location.startsWith('/applications/shop/screens/notes?who=')).toBe(true);
      expect(new URL(location, 'http://app.test').origin).toBe('http://app.test');
      expect(new URL(location, 'http://app.test').searchParams.get('who')).toBe(note);
    }
  });
});
