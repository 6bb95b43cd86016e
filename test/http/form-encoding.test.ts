import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { appEngine } from '../app/helpers.js';

async function submit(handler: (request: Request) => Promise<Response>, body: Uint8Array, encoding: string) {
  return handler(
    new Request('http://localhost/applications/shop/screens/notes/forms/add', {
      method: 'POST',
      body: body as Uint8Array<ArrayBuffer>,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': encoding },
    }),
  );
}

describe('form bodies with a Content-Encoding', () => {
  it('decodes gzip as it does a JSON body, and the form runs with its fields', async () => {
    const { engine } = await appEngine();
    const handler = createHandler(engine);
    const response = await submit(handler, gzipSync('note=hello&amount=1'), 'gzip');
    expect(response.status).toBe(303);
    // No body, and it says so: servers then send no chunked framing (every runtime alike).
    expect(response.headers.get('content-length')).toBe('0');
    const { runs } = await engine.listRuns({});
    expect(runs).toHaveLength(1);
    expect((await engine.getRun(runs[0]!.id)).input).toEqual(
      expect.objectContaining({ note: 'hello', amount: 1 }),
    );
  });

  it('refuses an encoding it cannot decode with a 415 page, and nothing runs', async () => {
    const { engine } = await appEngine();
    const handler = createHandler(engine);
    const response = await submit(handler, new TextEncoder().encode('note=hello&amount=1'), 'br');
    expect(response.status).toBe(415);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('accept-encoding')).toBe('gzip, deflate');
    expect(await response.text()).toContain('Content-Encoding br is not supported');
    expect((await engine.listRuns({})).runs).toEqual([]);
  });

  it('counts the decoded bytes against the limit: a small gzip of a large form is a 413 page', async () => {
    const { engine } = await appEngine();
    const handler = createHandler(engine, { maxBodyBytes: 1000 });
    const response = await submit(handler, gzipSync(`note=${'a'.repeat(5000)}&amount=1`), 'gzip');
    expect(response.status).toBe(413);
    expect(await response.text()).toContain('The form may be at most 1000 bytes.');
    expect((await engine.listRuns({})).runs).toEqual([]);
  });
});

describe('a form sent from another site', () => {
  it('is refused with a 403 page when the browser says cross-site or same-site (another port, a sibling subdomain), and nothing runs; same-origin and none go on', async () => {
    const { engine } = await appEngine();
    const handler = createHandler(engine);
    const post = (site?: string) =>
      handler(
        new Request('http://localhost/applications/shop/screens/notes/forms/add', {
          method: 'POST',
          body: 'note=hello&amount=1',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            ...(site ? { 'sec-fetch-site': site } : {}),
          },
        }),
      );
    for (const site of ['cross-site', 'same-site']) {
      const refused = await post(site);
      expect(refused.status).toBe(403);
      expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await refused.text()).toContain(
        'A form of this application can only be sent from its own pages.',
      );
    }
    expect((await engine.listRuns({})).runs).toEqual([]);
    for (const site of ['same-origin', 'none', undefined]) expect((await post(site)).status).toBe(303);
  });
});

describe('the media type of a form', () => {
  it('is matched whole: a type that only starts like a form type is a 415 page', async () => {
    const { engine } = await appEngine();
    const handler = createHandler(engine);
    const post = (type: string) =>
      handler(
        new Request('http://localhost/applications/shop/screens/notes/forms/add', {
          method: 'POST',
          body: 'note=hello&amount=1',
          headers: { 'content-type': type },
        }),
      );
    expect((await post('application/x-www-form-urlencodedXYZ')).status).toBe(415);
    expect((await post('multipart/form-data-ish; boundary=x')).status).toBe(415);
    expect((await engine.listRuns({})).runs).toEqual([]);
    expect((await post('Application/X-WWW-Form-Urlencoded ; charset=UTF-8')).status).toBe(303);
  });
});

describe('an unknown screen or form', () => {
  it('is a 404 page before the body is looked at: its content type and size do not matter', async () => {
    const { engine } = await appEngine();
    const handler = createHandler(engine, { maxBodyBytes: 10 });
    for (const path of [
      '/applications/shop/screens/notes/forms/nope',
      '/applications/shop/screens/nope/forms/add',
    ]) {
      const response = await handler(
        new Request(`http://localhost${path}`, {
          method: 'POST',
          body: JSON.stringify({ big: 'x'.repeat(100) }),
          headers: { 'content-type': 'application/json' },
        }),
      );
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    }
  });
});

describe('query parameters of a screen over HTTP', () => {
  it('keep one named __proto__, as app.screen does', async () => {
    const { engine } = await appEngine();
    await engine.applications.put('proto', {
      start_screen_url: 's',
      screens: [
        {
          url: 's',
          components: [[{ name: 't', type: 'text', text: { contents: 'got {{query_params.__proto__}}' } }]],
        },
      ],
    });
    const response = await createHandler(engine)(
      new Request('http://localhost/applications/proto/screens/s?__proto__=hello&__proto__=second'),
    );
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('got hello');
  });
});
