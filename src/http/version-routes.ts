import { z } from 'zod';
import type { VersionPage, VersionQuery } from '../adapters/definition-history.js';
import { ForbiddenError } from '../errors/index.js';
import { ApplicationSchema, EntitySchema, StoredTriggerSchema, WorkflowSchema } from '../schema/index.js';
import { defineRoute, json, nameParam, type RouteContext } from './route.js';

/** A registry that lists the versions of its definitions. */
interface Versioned<T> {
  versions?(name: string, query: VersionQuery): Promise<VersionPage<T>>;
}

/**
 * The versions of `name` read through `registry`, the registry as the principal asking sees it. A
 * view that does not list versions refuses: nothing is ever read past the view.
 */
function versionsOf(registry: object, name: string, query: VersionQuery): Promise<VersionPage> {
  const { versions } = registry as Versioned<unknown>;
  if (!versions)
    throw new ForbiddenError('reading definition versions is not open to this principal', 'definitions.read');
  return versions.call(registry, name, query);
}

const VERSION_QUERY = z.strictObject({
  // Decimal digits only: Number() would also take "0x10", "1e1" or " 3 ".
  after: z
    .string()
    .regex(/^(?:0|[1-9]\d{0,14})$/, 'must be a version number, in decimal digits')
    .transform(Number)
    .optional()
    .describe('The `next` of the previous page: only versions after it.'),
  limit: z
    .string()
    .regex(/^(?:[1-9]\d{0,2}|1000)$/, 'must be a whole number from 1 to 1000, in decimal digits')
    .transform(Number)
    .optional()
    .describe('Versions in a page (default 100).'),
});

/** A page of versions whose definitions have the shape `definition`. */
function versionPage<D extends z.ZodType>(definition: D) {
  return z.strictObject({
    versions: z.array(
      z.strictObject({
        version: z.number().int().describe('1, 2, 3… per name, in the order of the changes.'),
        at: z.string().describe('When the change was made (ISO 8601, UTC).'),
        by: z
          .strictObject({ id: z.string(), kind: z.enum(['user', 'key', 'service']) })
          .exactOptional()
          .describe('Who made the change, when known.'),
        action: z.enum(['create', 'replace', 'delete']),
        definition: definition.nullable().describe('The definition after the change; null for a delete.'),
      }),
    ),
    next: z
      .number()
      .int()
      .exactOptional()
      .describe('Where the next page starts (`after`); absent on the last page.'),
  });
}

/** The versions route of one kind of definition. */
function versionsRoute<const Name extends string, D extends z.ZodType>(route: {
  name: Name;
  path: string;
  resource: string;
  definition: D;
  list(engine: RouteContext['engine'], name: string, query: VersionQuery): Promise<VersionPage>;
}) {
  return defineRoute({
    method: 'GET',
    path: route.path,
    name: route.name,
    summary: `List the versions of ${route.resource === 'application' ? 'an' : 'a'} ${route.resource}`,
    description: `Oldest first, a page at a time: one version per change (create, replace, delete), with when it was made, who made it (when known) and the definition after it. Pass \`next\` of a page as \`after\` for the page after it. 404 when no ${route.resource} of that name ever existed.`,
    params: nameParam(route.resource[0]!.toUpperCase() + route.resource.slice(1)),
    query: VERSION_QUERY,
    responses: { 200: { description: 'A page of versions.', schema: versionPage(route.definition) } },
    problems: [400, 404],
    action: async ({ engine, params, query }) => {
      // A parameter left out is absent, not `undefined`.
      const given: VersionQuery = Object.fromEntries(
        Object.entries(query()).filter(([, value]) => value !== undefined),
      );
      return json(200, await route.list(engine, params.name, given));
    },
  });
}

/** Routes of definition history: the versions of each kind of stored definition. @internal */
export const VERSION_ROUTES = [
  versionsRoute({
    name: 'workflows.versions',
    path: '/workflows/{name}/versions',
    resource: 'workflow',
    definition: WorkflowSchema,
    list: (engine, name, query) => versionsOf(engine.workflows, name, query),
  }),
  versionsRoute({
    name: 'scripts.versions',
    path: '/scripts/{name}/versions',
    resource: 'script',
    definition: z.strictObject({ name: z.string(), source: z.string() }),
    list: (engine, name, query) => versionsOf(engine.scripts, name, query),
  }),
  versionsRoute({
    name: 'applications.versions',
    path: '/applications/{name}/versions',
    resource: 'application',
    definition: ApplicationSchema,
    list: (engine, name, query) => versionsOf(engine.applications, name, query),
  }),
  versionsRoute({
    name: 'triggers.versions',
    path: '/triggers/{name}/versions',
    resource: 'trigger',
    definition: StoredTriggerSchema,
    list: (engine, name, query) => versionsOf(engine.triggers, name, query),
  }),
  versionsRoute({
    name: 'catalog.entityVersions',
    path: '/catalog/entities/{name}/versions',
    resource: 'entity',
    definition: EntitySchema,
    list: (engine, name, query) => engine.catalog.entityVersions(name, query),
  }),
] as const;
