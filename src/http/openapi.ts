import { z } from 'zod';
import {
  ApplicationSchema,
  EntitySchema,
  GetEntityOutputSchema,
  ReadEntityBodySchema,
  RelationshipSchema,
  RunRecordSchema,
  RunSummarySchema,
  WorkflowSchema,
} from '../schema/index.js';
import { ProblemDetailsSchema } from './problem.js';
import type { BodyMedia, Route, RouteResponse } from './route.js';
import { ROUTE_LIST } from './routes.js';
import { WorkflowReplaceSchema } from './workflow-routes.js';

type JsonObject = Record<string, unknown>;
type Side = 'input' | 'output';

/** Options of {@link buildOpenApi}. */
export interface OpenApiOptions {
  /** Path prefix the API is mounted under; becomes the server URL. @default "" */
  basePath?: string;
  /** `info.title`. @default "stepwire HTTP API" */
  title?: string;
  /** `info.version`. @default "0.1.0" */
  version?: string;
}

/**
 * Schemas that get a name under `components.schemas`, per side: a request uses the input side (what
 * may be sent, defaults optional), an answer the output side (what is stored). Others are inlined.
 */
const COMPONENTS: readonly { schema: z.ZodType; input?: string; output?: string }[] = [
  { schema: EntitySchema, input: 'EntityInput', output: 'Entity' },
  { schema: RelationshipSchema, input: 'RelationshipInput', output: 'Relationship' },
  { schema: ReadEntityBodySchema, input: 'ReadEntityBody' },
  { schema: GetEntityOutputSchema, output: 'GetEntityOutput' },
  { schema: WorkflowSchema, input: 'WorkflowInput', output: 'Workflow' },
  { schema: WorkflowReplaceSchema, input: 'WorkflowReplaceInput' },
  { schema: ApplicationSchema, input: 'ApplicationInput', output: 'Application' },
  { schema: RunRecordSchema, output: 'RunRecord' },
  { schema: RunSummarySchema, output: 'RunSummary' },
  { schema: ProblemDetailsSchema, output: 'Problem' },
];

/** What each problem status means, for `components.responses`. */
const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: every problem is listed in `errors` with its path; or a path segment that is not valid percent-encoding (`invalid_path`).',
  401: 'Credentials are needed (the engine has an access policy) or were not valid: an API key as `Authorization: Bearer`, or a session cookie; or a webhook call not signed as its trigger requires.',
  403: "Refused: the principal lacks the permission (the message names it), the request changes something and did not come from this server's pages, its `Host` is not one the server answers to, or the authorize hook refused it.",
  404: 'No such resource.',
  409: 'A resource of that name already exists, or the request conflicts with what the sheets hold (a key taken or missing, a row still referenced, a foreign key matching no row, a missing sheet, a cell of the wrong type).',
  413: 'The request body is larger than the limit.',
  415: 'The request body has a media type this route does not accept.',
  422: 'A limit was reached while doing the work.',
  500: 'Unexpected error; the body says nothing about the internals.',
  501: 'The server lacks an optional package this route needs (the message names it and how to install it).',
  502: 'An outside service answered with an error.',
  503: 'The work was cancelled, or a store is held by another process or unavailable.',
};

/** Media types a request body of each kind may be sent as. */
const BODY_TYPES: Record<BodyMedia, readonly string[]> = {
  json: ['application/json'],
  script: ['text/plain', 'application/javascript'],
  form: ['application/x-www-form-urlencoded', 'multipart/form-data'],
};

/** Problem statuses every route may answer: the authorize hook's 403, a limit (an answer too large to send: 422), the unexpected 500. */
const ALWAYS = [403, 422, 500];
/** Problem statuses of every route that needs credentials where the engine has an access policy. */
const SIGNED = [401];
/** Problem statuses every route with path parameters may answer: 400 `invalid_path` for a value that is not valid percent-encoding. */
const WITH_PARAMS = [400];

/**
 * The OpenAPI 3.1 document of the HTTP API, built from the route table: every route with its
 * parameters, request body, answers and problem details. Request schemas are the zod schemas' input
 * side, answer schemas their output side.
 */
export function buildOpenApi(options: OpenApiOptions = {}): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of ROUTE_LIST) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  const components: JsonObject = {};
  for (const { schema, input, output } of COMPONENTS) {
    if (input) components[input] = fromZod(schema, 'input');
    if (output) components[output] = fromZod(schema, 'output');
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
    tags: [...new Set(ROUTE_LIST.map(tagOf))].map((name) => ({ name })),
    paths,
    components: {
      schemas: components,
      responses,
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (`sw_...`) made with `engine.keys.create` or `stepwire keys create`.',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'stepwire_session',
          description:
            "The session cookie the sign-in page sets (`__Host-stepwire_session` under https); requests that change something must also come from this server's pages.",
        },
      },
    },
    // Where the engine has an access policy; without one every request acts as the engine's service.
    security: [{ apiKey: [] }, { session: [] }],
  };
}

function operation(route: Route): JsonObject {
  const responses: JsonObject = {};
  for (const [status, answer] of Object.entries<RouteResponse>(route.responses))
    responses[status] = response(answer);
  const always = [
    ...(route.path.includes('{') ? WITH_PARAMS : []),
    ...(route.public ? [] : SIGNED),
    ...ALWAYS,
  ];
  for (const status of new Set([...route.problems, ...always])) {
    if (!PROBLEM_DESCRIPTIONS[status]) throw new Error(`${route.name}: no description of problem ${status}`);
    const own = responses[status] as { description: string; content?: JsonObject } | undefined;
    // A route that answers this status with a page of its own (a screen's 500) may still answer it
    // as a problem (an error that is not stepwire's): both media types are listed.
    responses[status] = own?.content
      ? {
          description: `${own.description} Otherwise: ${PROBLEM_DESCRIPTIONS[status]}`,
          content: { ...own.content, 'application/problem+json': { schema: ref('Problem') } },
        }
      : { $ref: `#/components/responses/Problem${status}` };
  }
  const parameters = [...pathParameters(route), ...queryParameters(route.query), ...headerParameters(route)];
  return {
    operationId: route.name,
    tags: [tagOf(route)],
    ...(route.public ? { security: [] } : {}),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            description: route.body.description,
            required: route.body.required,
            content: Object.fromEntries(
              BODY_TYPES[route.body.media].map((type) => [
                type,
                { schema: schemaFor(route.body!.schema, 'input') },
              ]),
            ),
          },
        }
      : {}),
    responses,
  };
}

function response(answer: RouteResponse): JsonObject {
  const headers = answer.headers && {
    headers: Object.fromEntries(
      Object.entries(answer.headers).map(([name, description]) => [
        name,
        { description, schema: { type: 'string' } },
      ]),
    ),
  };
  if (!answer.schema) return { description: answer.description, ...headers };
  const type = answer.media ?? 'application/json';
  return {
    description: answer.description,
    ...headers,
    content: { [type]: { schema: schemaFor(answer.schema, 'output') } },
  };
}

/** One parameter per `{name}` of the path, described by the route's `params` schema. */
function pathParameters(route: Route): JsonObject[] {
  const names = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const shape = route.params instanceof z.ZodObject ? (route.params.shape as Record<string, z.ZodType>) : {};
  const declared = Object.keys(shape);
  if (names.join() !== declared.join())
    throw new Error(
      `${route.name}: the path has {${names.join('}, {')}} but params declares ${declared.join(', ') || 'none'}`,
    );
  return names.map((name) => ({
    name,
    in: 'path',
    required: true,
    ...describedBy(shape[name]!),
    schema: parameterSchema(shape[name]!),
  }));
}

/** One parameter per key of an object schema, or one free-form parameter for a record. */
function queryParameters(query: z.ZodType | undefined): JsonObject[] {
  if (query === undefined) return [];
  if (query instanceof z.ZodObject) {
    return Object.entries(query.shape as Record<string, z.ZodType>).map(([name, schema]) => ({
      name,
      in: 'query',
      required: !schema.safeParse(undefined).success,
      ...describedBy(schema),
      schema: parameterSchema(schema),
    }));
  }
  return [
    {
      name: 'query',
      in: 'query',
      style: 'form',
      explode: true,
      ...describedBy(query),
      schema: parameterSchema(query),
    },
  ];
}

/** One optional header parameter per header the route reads. */
function headerParameters(route: Route): JsonObject[] {
  return (route.headers ?? []).map(({ name, description, pattern }) => ({
    name,
    in: 'header',
    required: false,
    description,
    schema: { type: 'string', ...(pattern ? { pattern } : {}) },
  }));
}

/** A `$ref` to a named component, an array of one, or the schema inlined. */
function schemaFor(schema: z.ZodType, side: Side): JsonObject {
  const named = COMPONENTS.find((c) => c.schema === schema)?.[side];
  if (named) return ref(named);
  if (schema instanceof z.ZodArray) {
    const item = COMPONENTS.find((c) => c.schema === schema.element)?.[side];
    if (item) return { type: 'array', items: ref(item) };
  }
  // One of several shapes (a run record, or `{ run_id }`): each named one stays a `$ref`.
  if (schema instanceof z.ZodUnion)
    return { anyOf: (schema.options as readonly z.ZodType[]).map((option) => schemaFor(option, side)) };
  return fromZod(schema, side);
}

/** A parameter's schema; its description is the parameter's own. */
function parameterSchema(schema: z.ZodType): JsonObject {
  const { description: _, ...rest } = fromZod(schema, 'input');
  return rest;
}

function fromZod(schema: z.ZodType, side: Side): JsonObject {
  const out = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: side,
    unrepresentable: 'any',
  }) as JsonObject;
  delete out['$schema'];
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const describedBy = (schema: z.ZodType) => (schema.description ? { description: schema.description } : {});
const tagOf = (route: Route) => route.name.split('.')[0]!;
