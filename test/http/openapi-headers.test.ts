import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { Engine } from '../../src/index.js';
import { customersEntity } from '../fixtures.js';
import { call } from './helpers.js';

describe('/openapi.json documents the request headers that change what a route does', () => {
  it('Idempotency-Key on runs and webhooks, X-Stepwire-Signature on webhooks, and stays valid', async () => {
    const { body: doc } = await call(createHandler(new Engine()), 'GET', '/openapi.json');
    const headersOf = (op: any) =>
      (op.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name);
    expect(headersOf(doc.paths['/workflows/{name}/runs'].post)).toEqual(['Idempotency-Key', 'Prefer']);
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

describe('/openapi.json documents the answer headers a client reads', () => {
  it('declares every Location, Idempotent-Replayed and Preference-Applied header the routes send', async () => {
    const handler = createHandler(new Engine());
    const { body: doc } = await call(handler, 'GET', '/openapi.json');
    const sent: string[] = [];
    const declared: string[] = [];
    const send = async (method: string, path: string, template: string, body?: unknown, headers = {}) => {
      const { response, status } = await call(handler, method, path, body, headers);
      const answer = doc.paths[template][method.toLowerCase()].responses[status];
      for (const name of ['location', 'idempotent-replayed', 'preference-applied'])
        if (response.headers.has(name)) sent.push(`${method} ${template} ${status} ${name}`);
      for (const name of Object.keys(answer.headers ?? {}))
        if (response.headers.has(name))
          declared.push(`${method} ${template} ${status} ${name.toLowerCase()}`);
    };
    const entity = customersEntity;
    await send('POST', '/catalog/entity', '/catalog/entity', entity);
    await send(
      'POST',
      '/catalog/entities/spreadsheet/register',
      '/catalog/entities/spreadsheet/register',
      entity,
    );
    await send('PUT', '/scripts/s', '/scripts/{name}', 'writeEntity("x", [])', {
      'content-type': 'text/plain',
    });
    const flow = { name: 'flow', steps: [], wires: [] };
    await send('POST', '/workflows', '/workflows', flow);
    await send('PUT', '/workflows/other', '/workflows/{name}', { steps: [], wires: [] });
    const key = { 'idempotency-key': 'k1' };
    await send('POST', '/workflows/flow/runs', '/workflows/{name}/runs', {}, key);
    await send('POST', '/workflows/flow/runs', '/workflows/{name}/runs', {}, key);
    const later = { 'idempotency-key': 'k2', prefer: 'respond-async' };
    await send('POST', '/workflows/flow/runs', '/workflows/{name}/runs', {}, later);
    await send('POST', '/workflows/flow/runs', '/workflows/{name}/runs', {}, later);
    await send('POST', '/triggers', '/triggers', { name: 't', type: 'webhook', workflow_name: 'flow' });
    const screen = { url: 'home', components: [[{ name: 't', type: 'text', text: { contents: 'Hi' } }]] };
    await send('PUT', '/applications/app', '/applications/{name}', {
      start_screen_url: 'home',
      screens: [screen],
    });
    expect(sent).toContain('POST /workflows/{name}/runs 200 idempotent-replayed');
    expect(sent).toContain('POST /workflows/{name}/runs 202 preference-applied');
    expect(sent).toContain('POST /workflows/{name}/runs 200 preference-applied');
    expect(sent.length).toBeGreaterThanOrEqual(9);
    expect(declared.sort()).toEqual(sent.sort());
  });
});
