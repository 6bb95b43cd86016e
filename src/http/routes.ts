import type { Engine } from '../engine/engine.js';
import { NotFoundError, ValidationError } from '../errors/index.js';
import { ReadEntityBodySchema, check } from '../schema/index.js';
import { readJson, readScript } from './body.js';
import type { ResolvedHandlerOptions } from './options.js';
import { handleScreenRoute } from './screens.js';

/** What a route's action gets. @internal */
export interface RouteContext {
  engine: Engine;
  request: Request;
  params: Record<string, string>;
  options: ResolvedHandlerOptions;
  /** The OpenAPI document, built on first use. */
  openapi: () => unknown;
}

/** One route of the API. @internal */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path template, e.g. `/workflows/{name}/runs`. */
  path: string;
  /** Operation name (the OpenAPI `operationId`). */
  name: string;
  action: (context: RouteContext) => Promise<Response>;
}

/** A JSON answer. @internal */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

const noContent = () => new Response(null, { status: 204 });
const enc = encodeURIComponent;

/** The route table of DESIGN section 7, literal segments before parameters where both could match. @internal */
export const ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/catalog/entity',
    name: 'catalog.registerEntity',
    action: async ({ engine, request, options }) => {
      const entity = await engine.catalog.registerEntity(await readJson(request, options));
      return json(201, entity, { location: `${options.basePath}/catalog/entities/${enc(entity.name)}` });
    },
  },
  {
    method: 'POST',
    path: '/catalog/entities/spreadsheet/register',
    name: 'catalog.upsertEntity',
    action: async ({ engine, request, options }) => {
      const { entity, created } = await engine.catalog.upsertEntity(await readJson(request, options));
      return json(created ? 201 : 200, entity, {
        location: `${options.basePath}/catalog/entities/${enc(entity.name)}`,
      });
    },
  },
  {
    method: 'POST',
    path: '/catalog/entity/relationship',
    name: 'catalog.createRelationship',
    action: async ({ engine, request, options }) =>
      json(201, await engine.catalog.createRelationship(await readJson(request, options))),
  },
  {
    method: 'GET',
    path: '/catalog/entities',
    name: 'catalog.listEntities',
    action: async ({ engine }) => json(200, await engine.catalog.listEntities()),
  },
  {
    method: 'GET',
    path: '/catalog/entities/{name}',
    name: 'catalog.getEntityDefinition',
    action: async ({ engine, params }) => json(200, await engine.catalog.getDefinition(params['name']!)),
  },
  {
    method: 'POST',
    path: '/catalog/entities/{name}/read',
    name: 'catalog.readEntity',
    action: async ({ engine, request, params, options }) => {
      const name = params['name']!;
      await engine.catalog.getDefinition(name); // 404 before anything else
      const body = await readJson(request, options, true);
      const shape = check(ReadEntityBodySchema, body ?? {});
      if (!shape.ok)
        throw new ValidationError(
          shape.issues,
          `Invalid read: ${shape.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`,
        );
      const output = await engine.catalog.getEntity(
        { entity_name: name, operation: {}, ...shape.value },
        { signal: request.signal },
      );
      return json(200, output);
    },
  },
  {
    method: 'POST',
    path: '/workflows',
    name: 'workflows.create',
    action: async ({ engine, request, options }) => {
      const workflow = await engine.workflows.create(await readJson(request, options));
      return json(201, workflow, { location: `${options.basePath}/workflows/${enc(workflow.name)}` });
    },
  },
  {
    method: 'GET',
    path: '/workflows',
    name: 'workflows.list',
    action: async ({ engine }) => json(200, await engine.workflows.list()),
  },
  {
    method: 'GET',
    path: '/workflows/{name}',
    name: 'workflows.get',
    action: async ({ engine, params }) => json(200, await engine.workflows.get(params['name']!)),
  },
  {
    method: 'PUT',
    path: '/workflows/{name}',
    name: 'workflows.replace',
    action: async ({ engine, request, params, options }) => {
      const body = await readJson(request, options);
      const bodyName =
        typeof body === 'object' && body !== null && !Array.isArray(body)
          ? (body as { name?: unknown }).name
          : undefined;
      if (bodyName !== undefined && bodyName !== params['name']) {
        throw new ValidationError([
          {
            code: 'name_mismatch',
            path: 'name',
            message: `the body names workflow ${JSON.stringify(bodyName)} but the path names "${params['name']}"; they must be equal`,
          },
        ]);
      }
      const definition =
        typeof body === 'object' && body !== null && !Array.isArray(body)
          ? { ...body, name: params['name'] }
          : body;
      const { workflow, created } = await engine.workflows.replace(definition);
      return json(
        created ? 201 : 200,
        workflow,
        created ? { location: `${options.basePath}/workflows/${enc(workflow.name)}` } : {},
      );
    },
  },
  {
    method: 'DELETE',
    path: '/workflows/{name}',
    name: 'workflows.delete',
    action: async ({ engine, params }) => {
      if (!(await engine.workflows.delete(params['name']!)))
        throw new NotFoundError('workflow', params['name']!);
      return noContent();
    },
  },
  {
    method: 'POST',
    path: '/workflows/{name}/runs',
    name: 'workflows.run',
    action: async ({ engine, request, params, options }) => {
      const input = await readJson(request, options, true);
      const record = await engine.run(params['name']!, input, { signal: request.signal });
      return json(200, record, { location: `${options.basePath}/runs/${enc(record.id)}` });
    },
  },
  {
    method: 'GET',
    path: '/runs/{id}',
    name: 'runs.get',
    action: async ({ engine, params }) => json(200, await engine.getRun(params['id']!)),
  },
  {
    method: 'GET',
    path: '/scripts',
    name: 'scripts.list',
    action: async ({ engine }) => json(200, await engine.scripts.list()),
  },
  {
    method: 'PUT',
    path: '/scripts/{name}',
    name: 'scripts.put',
    action: async ({ engine, request, params, options }) => {
      const name = params['name']!;
      const source = await readScript(request, options);
      const existed = await engine.scripts.exists(name);
      await engine.scripts.put(name, source);
      return json(
        existed ? 200 : 201,
        { name },
        existed ? {} : { location: `${options.basePath}/scripts/${enc(name)}` },
      );
    },
  },
  {
    method: 'GET',
    path: '/scripts/{name}',
    name: 'scripts.get',
    action: async ({ engine, params }) => {
      const source = await engine.scripts.get(params['name']!);
      return new Response(source, {
        status: 200,
        headers: { 'content-type': 'text/javascript; charset=utf-8' },
      });
    },
  },
  {
    method: 'DELETE',
    path: '/scripts/{name}',
    name: 'scripts.delete',
    action: async ({ engine, params }) => {
      if (!(await engine.scripts.delete(params['name']!))) throw new NotFoundError('script', params['name']!);
      return noContent();
    },
  },
  {
    method: 'GET',
    path: '/applications',
    name: 'applications.list',
    action: async ({ engine }) => json(200, await engine.applications.list()),
  },
  {
    method: 'PUT',
    path: '/applications/{name}',
    name: 'applications.put',
    action: async ({ engine, request, params, options }) => {
      const { application, created } = await engine.applications.put(
        params['name']!,
        await readJson(request, options),
      );
      return json(
        created ? 201 : 200,
        application,
        created ? { location: `${options.basePath}/applications/${enc(params['name']!)}` } : {},
      );
    },
  },
  {
    method: 'GET',
    path: '/applications/{name}',
    name: 'applications.get',
    action: async ({ engine, params }) => json(200, await engine.applications.get(params['name']!)),
  },
  {
    method: 'DELETE',
    path: '/applications/{name}',
    name: 'applications.delete',
    action: async ({ engine, params }) => {
      if (!(await engine.applications.delete(params['name']!)))
        throw new NotFoundError('application', params['name']!);
      return noContent();
    },
  },
  {
    method: 'GET',
    path: '/applications/{name}/screens/{url}',
    name: 'applications.renderScreen',
    action: ({ engine, request, params, options }) =>
      handleScreenRoute(engine, request, { app: params['name']!, screen: params['url']! }, options),
  },
  {
    method: 'POST',
    path: '/applications/{name}/screens/{url}/forms/{component}',
    name: 'applications.submitForm',
    action: ({ engine, request, params, options }) =>
      handleScreenRoute(
        engine,
        request,
        { app: params['name']!, screen: params['url']!, form: params['component']! },
        options,
      ),
  },
  {
    method: 'GET',
    path: '/openapi.json',
    name: 'openapi',
    action: async ({ openapi }) => json(200, openapi()),
  },
];
