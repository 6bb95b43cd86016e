import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/json-schema/index.js';
import { buildOpenApi, createHandler } from '../../src/http/index.js';
import { ROUTES } from '../../src/http/routes.js';
import { Engine } from '../../src/index.js';
import { customersEntity } from '../fixtures.js';
import { call, lookupWorkflow } from './helpers.js';

describe('GET /openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document', async () => {
    const res = await call(createHandler(new Engine()), 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every route with its operationId, problem answers and request body', () => {
    const doc = buildOpenApi() as any;
    for (const route of ROUTES) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.operationId).toBe(route.name);
      if (route.path.startsWith('/applications/{name}/screens/')) {
        // A screen's own errors are pages; an error that is not stepwire's is a problem.
        expect(Object.keys(op.responses['500'].content).sort()).toEqual([
          'application/problem+json',
          'text/html',
        ]);
      } else expect(op.responses['500'].$ref).toBe('#/components/responses/Problem500');
      // Where the engine has an access policy: 401 without credentials, but on the public routes.
      if (route.public) expect(op.security, route.name).toEqual([]);
      else expect(op.responses['401'].$ref, route.name).toBe('#/components/responses/Problem401');
      // Every POST and PUT takes a body, but cancelling a run and signing out, which need none.
      if (
        (route.method === 'POST' || route.method === 'PUT') &&
        route.name !== 'runs.cancel' &&
        route.name !== 'session.signOut'
      )
        expect(op.requestBody, route.name).toBeDefined();
    }
    // An engine closed while serving answers runs and hooks with 503 (code closed).
    for (const [path, method] of [
      ['/workflows/{name}/runs', 'post'],
      ['/hooks/{name}', 'post'],
    ] as const)
      expect(doc.paths[path][method].responses['503'].$ref).toBe('#/components/responses/Problem503');
    expect(doc.components.responses.Problem400.content['application/problem+json'].schema.$ref).toBe(
      '#/components/schemas/Problem',
    );
  });

  it('builds its schemas from the zod schemas: input side for requests, output side for answers', () => {
    const doc = buildOpenApi() as any;
    const input = compileSchema(doc.components.schemas.EntityInput);
    const output = compileSchema(doc.components.schemas.Entity);
    expect(input.validate(customersEntity)).toEqual([]);
    expect(
      input.validate({ ...customersEntity, columns: [{ name: 'id', type: 'INT' }] }).map((i) => i.path),
    ).toEqual(['columns[0].type']);
    // The output of a stored entity has no extra properties.
    expect(output.validate({ ...customersEntity, extra: 1 })).not.toEqual([]);
    expect(compileSchema(doc.components.schemas.WorkflowInput).validate(lookupWorkflow)).toEqual([]);
    // PUT /workflows/{name} takes a body without `name` (the path's); POST needs it.
    const { name: _name, ...nameless } = lookupWorkflow;
    const put = doc.paths['/workflows/{name}'].put.requestBody.content['application/json'].schema;
    expect(put).toEqual({ $ref: '#/components/schemas/WorkflowReplaceInput' });
    expect(compileSchema(doc.components.schemas.WorkflowReplaceInput).validate(nameless)).toEqual([]);
    expect(
      compileSchema(doc.components.schemas.WorkflowInput)
        .validate(nameless)
        .map((i) => i.path),
    ).toEqual(['name']);
    expect(
      compileSchema(doc.components.schemas.ReadEntityBody)
        .validate({ page_size: 0 })
        .map((i) => i.path),
    ).toEqual(['page_size']);
  });

  it('puts the base path in the server URL', async () => {
    const res = await call(createHandler(new Engine(), { basePath: '/api' }), 'GET', '/api/openapi.json');
    expect(res.body.servers).toEqual([{ url: '/api' }]);
  });
});
