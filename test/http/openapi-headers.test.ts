import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { call } from './helpers.js';

describe('/openapi.json documents the request headers that change what a route does', () => {
  it('Idempotency-Key on runs and webhooks, X-Stepwire-Signature on webhooks, and stays valid', async () => {
    const { body: doc } = await call(createHandler(new Engine()), 'GET', '/openapi.json');
    const headersOf = (op: any) =>
      (op.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name);
    expect(headersOf(doc.paths['/workflows/{name}/runs'].post)).toEqual(['Idempotency-Key']);
    expect(headersOf(doc.paths['/hooks/{name}'].post)).toEqual(['Idempotency-Key', 'X-Stepwire-Signature']);
    const signature = doc.paths['/hooks/{name}'].post.parameters.find(
      (p: any) => p.name === 'X-Stepwire-Signature',
    );
    expect(new RegExp(signature.schema.pattern).test(`sha256=${'ab'.repeat(32)}`)).toBe(true);
    expect(headersOf(doc.paths['/workflows'].get)).toEqual([]);
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
  });
});
