import { z } from 'zod';
import type { AuditQuery } from '../access/audit.js';
import { defineRoute, json } from './route.js';

const AuditEntrySchema = z.strictObject({
  id: z.string().describe('Opaque; sorts in the order entries were appended.'),
  at: z.string().describe('When the entry was appended (ISO 8601, UTC).'),
  principal: z.strictObject({
    id: z.string(),
    kind: z.enum(['user', 'key', 'service']),
  }),
  action: z.string().describe('What was done, e.g. `run.start`.'),
  resource: z.string().describe('What it was done to, e.g. `workflow:invoice`.'),
  outcome: z.enum(['success', 'failure', 'denied']),
  detail: z.record(z.string(), z.unknown()).optional().describe('More about it: names, counts, codes.'),
});

/** Routes of the audit log. @internal */
export const AUDIT_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/audit',
    name: 'audit.list',
    summary: 'List the audit log',
    description:
      'Entries oldest first (in the order they were appended), a page at a time: who changed definitions or the access policy, started, cancelled or retried runs, wrote rows. Pass `next` of a page as `after` for the page after it. Needs `audit.read`.',
    query: z.strictObject({
      after: z.string().min(1).optional().describe('The `next` of the previous page.'),
      // Decimal digits only: Number() would also take "0x10", "1e1" or " 3 ".
      limit: z
        .string()
        .regex(/^(?:[1-9]\d{0,2}|1000)$/, 'must be a whole number from 1 to 1000, in decimal digits')
        .transform(Number)
        .optional()
        .describe('Entries in a page (default 100).'),
      action: z.string().min(1).optional().describe('Only entries of this action, e.g. `run.start`.'),
      principal: z.string().min(1).optional().describe('Only entries of the principal with this id.'),
      resource: z
        .string()
        .min(1)
        .optional()
        .describe('Only entries about this resource, e.g. `entity:customers`.'),
    }),
    responses: {
      200: {
        description: 'A page of audit entries.',
        schema: z.strictObject({
          entries: z.array(AuditEntrySchema),
          next: z.string().optional().describe('Where the next page starts; absent on the last page.'),
        }),
      },
    },
    problems: [400],
    action: async ({ engine, query }) => {
      // A parameter left out is absent, not `undefined`.
      const given = Object.entries(query()).filter(([, value]) => value !== undefined);
      const audit: AuditQuery = Object.fromEntries(given);
      return json(200, await engine.audit.list(audit));
    },
  }),
] as const;
