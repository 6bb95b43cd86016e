import { z } from 'zod';
import {
  EntitySchema,
  GetEntityOutputSchema,
  ReadEntityBodySchema,
  RelationshipSchema,
  WriteEntityOutputSchema,
  WriteRowsBodySchema,
  type EntityBody,
  type RelationshipBody,
} from '../schema/index.js';
import { entityRowsOf } from '../catalog/rows.js';
import { checkedRead } from '../query/execute.js';
import type { CallOptions } from '../adapters/types.js';
import { LOCATION, defineRoute, json, nameParam, type RouteContext } from './route.js';

const enc = encodeURIComponent;

/** Routes of the entity catalog. @internal */
export const CATALOG_ROUTES = [
  defineRoute({
    method: 'POST',
    path: '/catalog/entity',
    name: 'catalog.registerEntity',
    summary: 'Register an entity',
    body: { media: 'json', schema: EntitySchema, required: true, description: 'The entity definition.' },
    responses: { 201: { description: 'Registered.', schema: EntitySchema, headers: LOCATION } },
    problems: [400, 409, 413, 415],
    action: async ({ engine, body, options }) => {
      const entity = await engine.catalog.registerEntity((await body()) as EntityBody);
      return json(201, entity, { location: `${options.basePath}/catalog/entities/${enc(entity.name)}` });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/catalog/entities/spreadsheet/register',
    name: 'catalog.upsertEntity',
    summary: 'Register or replace an entity',
    body: { media: 'json', schema: EntitySchema, required: true, description: 'The entity definition.' },
    responses: {
      200: { description: 'Replaced.', schema: EntitySchema, headers: LOCATION },
      201: { description: 'Registered.', schema: EntitySchema, headers: LOCATION },
    },
    problems: [400, 413, 415],
    action: async ({ engine, body, options }) => {
      const { entity, created } = await engine.catalog.upsertEntity((await body()) as EntityBody);
      return json(created ? 201 : 200, entity, {
        location: `${options.basePath}/catalog/entities/${enc(entity.name)}`,
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/catalog/entity/relationship',
    name: 'catalog.createRelationship',
    summary: 'Create a relationship',
    body: {
      media: 'json',
      schema: RelationshipSchema,
      required: true,
      description: 'The relationship between two entities.',
    },
    responses: { 201: { description: 'Created.', schema: RelationshipSchema } },
    problems: [400, 404, 409, 413, 415],
    action: async ({ engine, body }) =>
      json(201, await engine.catalog.createRelationship((await body()) as RelationshipBody)),
  }),
  defineRoute({
    method: 'GET',
    path: '/catalog/entities',
    name: 'catalog.listEntities',
    summary: 'List entity definitions',
    responses: { 200: { description: 'Every entity, ordered by name.', schema: z.array(EntitySchema) } },
    problems: [],
    action: async ({ engine }) => json(200, await engine.catalog.listEntities()),
  }),
  defineRoute({
    method: 'GET',
    path: '/catalog/entities/{name}',
    name: 'catalog.getEntityDefinition',
    summary: 'Read an entity definition',
    params: nameParam('Entity'),
    responses: { 200: { description: 'The definition.', schema: EntitySchema } },
    problems: [404],
    action: async ({ engine, params }) => json(200, await engine.catalog.getDefinition(params.name)),
  }),
  defineRoute({
    method: 'POST',
    path: '/catalog/entities/{name}/read',
    name: 'catalog.readEntity',
    summary: 'Read rows of an entity (get_entity)',
    description:
      'Runs the get_entity read. A read that ran answers 200 even when `body.error.is_error` is true (a data error such as an unknown column, as the spec shapes it); an invalid body is a 400 and an unknown entity a 404.',
    params: nameParam('Entity'),
    body: {
      media: 'json',
      schema: ReadEntityBodySchema,
      required: false,
      validate: true,
      description: 'The operation and paging; an empty body reads the first page of every column.',
    },
    responses: { 200: { description: 'The get_entity output.', schema: GetEntityOutputSchema } },
    problems: [400, 404, 413, 415],
    action: async (context) => {
      const { engine, params, body } = context;
      await engine.catalog.requireDefinition(params.name); // 404 before the body is read
      const read = await body();
      // The body was checked (and the name is never empty): the read does not check it again.
      const output = await engine.catalog.getEntity(
        checkedRead({ entity_name: params.name, ...read, operation: read.operation ?? {} }),
        // The request's signal is made only if the read asks for it (a read from memory does not).
        new RequestSignal(context),
      );
      return json(200, output);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/catalog/entities/{name}/rows',
    name: 'catalog.writeRows',
    summary: 'Write rows of an entity (append, upsert, update, delete, replace)',
    description:
      'Writes all the rows or none. `write_mode` defaults to `append`; `upsert`, `update` and `delete` find rows by primary key (for `delete`, `rows` are objects of the key columns). A key taken, a key missing, a row still referenced by an enforced foreign key or a foreign key matching no row of its target is a 409, and so is a sheet that is missing or holds a cell its column cannot read (the detail names the A1 cell); a bad row (unknown column, wrong type, a broken column rule) a 400; the spreadsheet service failing a 502.',
    params: nameParam('Entity'),
    body: {
      media: 'json',
      schema: WriteRowsBodySchema,
      required: true,
      validate: true,
      description: 'The write mode and the rows: objects, arrays in column order, or a data table.',
    },
    responses: { 200: { description: 'Rows written (or deleted).', schema: WriteEntityOutputSchema } },
    problems: [400, 404, 409, 413, 415, 422, 502, 503],
    action: async ({ engine, signal, params, body }) => {
      await engine.catalog.requireDefinition(params.name); // 404 before the body is read
      const { write_mode, rows } = await body();
      const result = await engine.catalog.write(
        [{ entity: params.name, rows: entityRowsOf(rows), mode: write_mode ?? 'append' }],
        { signal },
      );
      return json(200, { written: result.written[params.name] ?? 0 });
    },
  }),
] as const;

/**
 * Call options whose `signal` is the request's, made only when read. A class, as the handler's route
 * context is (see there): an object literal with a getter, made per request, came to be allocated in
 * the old generation and kept the request's objects alive through young collections.
 */
class RequestSignal implements CallOptions {
  readonly #context: Pick<RouteContext, 'signal'>;

  constructor(context: Pick<RouteContext, 'signal'>) {
    this.#context = context;
  }

  get signal(): AbortSignal {
    return this.#context.signal;
  }
}
