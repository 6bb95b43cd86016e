import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { appEngine } from '../app/helpers.js';
import { call } from './helpers.js';

describe('Content-Length of answers', () => {
  it('is on every answer with a body, counting its bytes; a HEAD carries it without the body', async () => {
    const { engine } = await appEngine();
    await engine.scripts.put('é.js', '// ünïcödé');
    const handler = createHandler(engine);
    for (const path of [
      '/catalog/entities',
      `/scripts/${encodeURIComponent('é.js')}`,
      '/applications/shop/screens/orders?customer=7',
      '/workflows/nope',
      '/no/such/route',
      '/openapi.json',
    ]) {
      const get = await call(handler, 'GET', path);
      expect(get.response.headers.get('content-length'), path).toBe(
        String(new TextEncoder().encode(get.text).byteLength),
      );
      const head = await call(handler, 'HEAD', path);
      expect(head.response.headers.get('content-length'), path).toBe(
        get.response.headers.get('content-length'),
      );
      expect(head.response.body, path).toBeNull();
    }
  });

  it('is not added to an answer without a body (204)', async () => {
    const { engine } = await appEngine();
    await engine.scripts.put('gone.js', '// x');
    const res = await call(createHandler(engine), 'DELETE', '/scripts/gone.js');
    expect(res.status).toBe(204);
    expect(res.response.headers.get('content-length')).toBeNull();
  });
});
