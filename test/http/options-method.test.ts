import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { call } from './helpers.js';

describe('OPTIONS and other methods no route has', () => {
  it('are 405 with Allow on a known path, 404 elsewhere, both problem+json', async () => {
    const handler = createHandler(new Engine());
    for (const method of ['OPTIONS', 'PATCH', 'PROPFIND']) {
      const known = await call(handler, method, '/workflows');
      expect(known.status, method).toBe(405);
      expect(known.response.headers.get('allow'), method).toBe('GET, HEAD, POST');
      expect(known.response.headers.get('content-type'), method).toBe('application/problem+json');
      expect(known.body, method).toMatchObject({ status: 405, code: 'method_not_allowed', errors: [] });
      const unknown = await call(handler, method, '/nowhere');
      expect(unknown.status, method).toBe(404);
      expect(unknown.body.code, method).toBe('route_not_found');
    }
  });
});
