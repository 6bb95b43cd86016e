import { AccessPolicySchema, type AccessPolicy } from '../schema/access.js';
import { NotFoundError } from '../errors/index.js';
import { defineRoute, json } from './route.js';

/** Routes of the access policy. @internal */
export const ACCESS_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/access',
    name: 'access.get',
    summary: 'Read the access policy',
    description:
      'The stored access policy: roles and their grants, row rules and column rules. Needs `definitions.read`.',
    responses: { 200: { description: 'The policy.', schema: AccessPolicySchema } },
    problems: [404],
    action: async ({ engine }) => {
      const policy = await engine.access.get();
      if (!policy) throw new NotFoundError('access policy', 'policy');
      return json(200, policy);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/access',
    name: 'access.put',
    summary: 'Store the access policy',
    description:
      'Checks the policy (known permissions, roles defined, every entity and column a rule names existing) and stores it; it is in force from the next request. Access control is on from then on. Needs `definitions.write`.',
    body: {
      media: 'json',
      schema: AccessPolicySchema,
      required: true,
      description: 'The access policy: `roles`, `rows`, `columns`.',
    },
    responses: { 200: { description: 'Stored.', schema: AccessPolicySchema } },
    problems: [400, 413, 415],
    action: async ({ engine, body }) => json(200, await engine.access.put((await body()) as AccessPolicy)),
  }),
] as const;
