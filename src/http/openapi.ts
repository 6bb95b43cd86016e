import { z } from 'zod';
import {
  ApplicationSchema,
  EntitySchema,
  GetEntityOutputSchema,
  ReadEntityBodySchema,
  RelationshipSchema,
  WorkflowSchema,
} from '../schema/index.js';
import { ROUTES } from './routes.js';

type JsonObject = Record<string, unknown>;

/** Options of {@link buildOpenApi}. */
export interface OpenApiOptions {
  /** Path prefix the API is mounted under; becomes the server URL. @default "" */
  basePath?: string;
  /** `info.title`. @default "stepwire HTTP API" */
  title?: string;
  /** `info.version`. @default "0.1.0" */
  version?: string;
}

function fromZod(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonObject;
  delete out['$schema'];
  return out;
}

const ISSUE = {
  type: 'object',
  required: ['code', 'path', 'message'],
  properties: { code: { type: 'string' }, path: { type: 'string' }, message: { type: 'string' } },
};

const RUN_ERROR = {
  type: ['object', 'null'],
  required: ['code', 'message'],
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    step: { type: 'string' },
    issues: { type: 'array', items: ISSUE },
  },
};

const RUN_RECORD = {
  type: 'object',
  description: 'The record of one workflow run.',
  required: ['id', 'workflow', 'status', 'input', 'output', 'error', 'started_at', 'finished_at', 'steps'],
  properties: {
    id: { type: 'string' },
    workflow: { type: 'string' },
    status: { enum: ['running', 'succeeded', 'failed', 'cancelled', 'interrupted'] },
    input: {},
    output: {},
    error: RUN_ERROR,
    started_at: { type: 'string' },
    finished_at: { type: ['string', 'null'] },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'status', 'attempts', 'started_at', 'finished_at', 'output', 'error'],
        properties: {
          name: { type: 'string' },
          status: { enum: ['running', 'succeeded', 'failed', 'skipped'] },
          attempts: { type: 'integer', minimum: 0 },
          started_at: { type: ['string', 'null'] },
          finished_at: { type: ['string', 'null'] },
          output: {},
          error: RUN_ERROR,
          logs: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
};

const PROBLEM = {
  type: 'object',
  description: 'RFC 9457 problem details; `errors` lists every problem with its path.',
  required: ['type', 'status', 'title', 'detail', 'code', 'errors'],
  properties: {
    type: { type: 'string' },
    status: { type: 'integer' },
    title: { type: 'string' },
    detail: { type: 'string' },
    code: { type: 'string' },
    errors: { type: 'array', items: ISSUE },
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonBody = (schema: JsonObject, description: string, required = true) => ({
  description,
  required,
  content: { 'application/json': { schema } },
});
const ok = (description: string, schema?: JsonObject) => ({
  description,
  ...(schema ? { content: { 'application/json': { schema } } } : {}),
});
const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' } } },
});
const problems = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/Problem${s}` }]));

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: every problem is listed in `errors` with its path.',
  403: 'The authorize hook refused the request.',
  404: 'No such resource.',
  409: 'A resource of that name already exists.',
  413: 'The request body is larger than the limit.',
  415: 'The request body has a media type this route does not accept.',
  500: 'Unexpected error; the body says nothing about the internals.',
};

/** Per operation: summary, request body, success responses and the problems it may answer. */
function operations(): Record<string, JsonObject> {
  const name = (what: string) => [
    {
      name: 'name',
      in: 'path',
      required: true,
      description: `${what} name (URL-encoded)`,
      schema: { type: 'string' },
    },
  ];
  const list = { type: 'array', items: { type: 'string' } };
  return {
    'catalog.registerEntity': {
      summary: 'Register an entity',
      requestBody: jsonBody(ref('EntityInput'), 'The entity (SPEC 2.1).'),
      responses: { 201: ok('Registered.', ref('Entity')), ...problems(400, 409, 413, 415) },
    },
    'catalog.upsertEntity': {
      summary: 'Register or replace an entity',
      requestBody: jsonBody(ref('EntityInput'), 'The entity (SPEC 2.1).'),
      responses: {
        200: ok('Replaced.', ref('Entity')),
        201: ok('Registered.', ref('Entity')),
        ...problems(400, 413, 415),
      },
    },
    'catalog.createRelationship': {
      summary: 'Create a relationship',
      requestBody: jsonBody(ref('RelationshipInput'), 'The relationship (SPEC 2.3).'),
      responses: { 201: ok('Created.', ref('Relationship')), ...problems(400, 404, 409, 413, 415) },
    },
    'catalog.listEntities': {
      summary: 'List entity definitions',
      responses: { 200: ok('Every entity, ordered by name.', { type: 'array', items: ref('Entity') }) },
    },
    'catalog.getEntityDefinition': {
      summary: 'Read an entity definition',
      parameters: name('Entity'),
      responses: { 200: ok('The definition.', ref('Entity')), ...problems(404) },
    },
    'catalog.readEntity': {
      summary: 'Read rows of an entity (get_entity)',
      description:
        'Runs the get_entity read. A read that ran answers 200 even when `body.error.is_error` is true (a data error such as an unknown column, as the spec shapes it); an invalid body is a 400 and an unknown entity a 404.',
      parameters: name('Entity'),
      requestBody: jsonBody(
        ref('ReadEntityBody'),
        'The operation and paging; an empty body reads the first page of every column.',
        false,
      ),
      responses: {
        200: ok('The get_entity output.', ref('GetEntityOutput')),
        ...problems(400, 404, 413, 415),
      },
    },
    'workflows.create': {
      summary: 'Create a workflow',
      requestBody: jsonBody(ref('WorkflowInput'), 'The workflow (SPEC 2.4).'),
      responses: { 201: ok('Created.', ref('Workflow')), ...problems(400, 409, 413, 415) },
    },
    'workflows.list': {
      summary: 'List workflows',
      responses: { 200: ok('Every workflow, ordered by name.', { type: 'array', items: ref('Workflow') }) },
    },
    'workflows.get': {
      summary: 'Read a workflow',
      parameters: name('Workflow'),
      responses: { 200: ok('The workflow.', ref('Workflow')), ...problems(404) },
    },
    'workflows.replace': {
      summary: 'Create or replace a workflow',
      description: 'The body `name`, when given, must equal the name in the path.',
      parameters: name('Workflow'),
      requestBody: jsonBody(ref('WorkflowInput'), 'The workflow (SPEC 2.4).'),
      responses: {
        200: ok('Replaced.', ref('Workflow')),
        201: ok('Created.', ref('Workflow')),
        ...problems(400, 413, 415),
      },
    },
    'workflows.delete': {
      summary: 'Delete a workflow',
      parameters: name('Workflow'),
      responses: { 204: ok('Deleted.'), ...problems(404) },
    },
    'workflows.run': {
      summary: 'Run a workflow',
      description:
        'Runs the workflow to its end. 200 with the run record whether it succeeded or failed; 400 when the input is invalid (nothing runs).',
      parameters: name('Workflow'),
      requestBody: jsonBody(
        { description: 'The workflow input; validated against its input_schema.' },
        'The input; empty means `{}`.',
        false,
      ),
      responses: { 200: ok('The run record.', ref('RunRecord')), ...problems(400, 404, 413, 415) },
    },
    'runs.get': {
      summary: 'Read a run record',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { 200: ok('The run record.', ref('RunRecord')), ...problems(404) },
    },
    'scripts.list': {
      summary: 'List script names',
      responses: { 200: ok('Every script name, ordered.', list) },
    },
    'scripts.put': {
      summary: 'Store a transform script',
      parameters: name('Script'),
      requestBody: {
        required: true,
        description: 'The JavaScript source.',
        content: {
          'text/plain': { schema: { type: 'string' } },
          'application/javascript': { schema: { type: 'string' } },
        },
      },
      responses: {
        200: ok('Replaced.', ref('ScriptRef')),
        201: ok('Stored.', ref('ScriptRef')),
        ...problems(400, 413, 415),
      },
    },
    'scripts.get': {
      summary: 'Read a transform script',
      parameters: name('Script'),
      responses: {
        200: { description: 'The source.', content: { 'text/javascript': { schema: { type: 'string' } } } },
        ...problems(404),
      },
    },
    'scripts.delete': {
      summary: 'Delete a script',
      parameters: name('Script'),
      responses: { 204: ok('Deleted.'), ...problems(404) },
    },
    'applications.list': {
      summary: 'List application names',
      responses: { 200: ok('Every application name, ordered.', list) },
    },
    'applications.put': {
      summary: 'Store an application config',
      parameters: name('Application'),
      requestBody: jsonBody(ref('ApplicationInput'), 'The application configuration (SPEC 2.7).'),
      responses: {
        200: ok('Replaced.', ref('Application')),
        201: ok('Stored.', ref('Application')),
        ...problems(400, 413, 415),
      },
    },
    'applications.get': {
      summary: 'Read an application config',
      parameters: name('Application'),
      responses: { 200: ok('The config.', ref('Application')), ...problems(404) },
    },
    'applications.delete': {
      summary: 'Delete an application',
      parameters: name('Application'),
      responses: { 204: ok('Deleted.'), ...problems(404) },
    },
    'applications.renderScreen': {
      summary: 'Render a screen as HTML',
      description:
        'The query string is passed to the screen (`{{query_params.x}}`, grid paging). Errors are HTML pages.',
      parameters: [
        ...name('Application'),
        { name: 'url', in: 'path', required: true, description: 'Screen url', schema: { type: 'string' } },
      ],
      responses: { 200: html('The screen.'), 404: html('No such application or screen.') },
    },
    'applications.submitForm': {
      summary: 'Submit a form',
      description:
        'Runs the form workflow, then redirects (303); a failed run or invalid input answers 422 with the screen re-rendered, the errors next to the form.',
      parameters: [
        ...name('Application'),
        { name: 'url', in: 'path', required: true, description: 'Screen url', schema: { type: 'string' } },
        {
          name: 'component',
          in: 'path',
          required: true,
          description: 'Form component name',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': { schema: { type: 'object' } },
          'multipart/form-data': { schema: { type: 'object' } },
        },
      },
      responses: {
        303: { description: 'Redirect to the next screen.' },
        400: html('The form body could not be read.'),
        404: html('No such application, screen or form.'),
        413: html('The form is larger than the limit.'),
        415: html('The form is not urlencoded or multipart.'),
        422: html('The screen again, with the errors next to the form.'),
      },
    },
    openapi: {
      summary: 'This document',
      responses: { 200: ok('The OpenAPI 3.1 document.', { type: 'object' }) },
    },
  };
}

/**
 * The OpenAPI 3.1 document of the HTTP API: every route with its request body, its answers and its
 * problem details. Request schemas are the zod schemas' input side, response schemas their output side.
 */
export function buildOpenApi(options: OpenApiOptions = {}): JsonObject {
  const ops = operations();
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of ROUTES) {
    const op = ops[route.name];
    if (!op) throw new Error(`route ${route.name} is not documented`);
    const [tag] = route.name.split('.');
    const responses = {
      ...(op['responses'] as JsonObject),
      '403': { $ref: '#/components/responses/Problem403' },
      '500': { $ref: '#/components/responses/Problem500' },
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.name,
      tags: [tag],
      ...op,
      responses,
    };
  }
  const responses = Object.fromEntries(
    Object.entries(PROBLEM_DESCRIPTIONS).map(([status, description]) => [
      `Problem${status}`,
      { description, content: { 'application/problem+json': { schema: ref('Problem') } } },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'stepwire HTTP API',
      version: options.version ?? '0.1.0',
      description: 'Entities, workflows, scripts and applications of a stepwire engine.',
    },
    servers: [{ url: options.basePath || '/' }],
    tags: ['catalog', 'workflows', 'runs', 'scripts', 'applications', 'openapi'].map((name) => ({ name })),
    paths,
    components: {
      schemas: {
        EntityInput: fromZod(EntitySchema, 'input'),
        Entity: fromZod(EntitySchema, 'output'),
        RelationshipInput: fromZod(RelationshipSchema, 'input'),
        Relationship: fromZod(RelationshipSchema, 'output'),
        ReadEntityBody: fromZod(ReadEntityBodySchema, 'input'),
        GetEntityOutput: fromZod(GetEntityOutputSchema, 'output'),
        WorkflowInput: fromZod(WorkflowSchema, 'input'),
        Workflow: fromZod(WorkflowSchema, 'output'),
        ApplicationInput: fromZod(ApplicationSchema, 'input'),
        Application: fromZod(ApplicationSchema, 'output'),
        RunRecord: RUN_RECORD,
        ScriptRef: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        Problem: PROBLEM,
      },
      responses,
    },
  };
}
