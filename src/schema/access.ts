import { z } from 'zod';
import { addIssue } from './issues.js';
import { FilterSchema } from './get-entity.js';

/**
 * The permissions of the access policy. A grant is a permission alone (on every
 * resource) or `<permission>:<name>` (one entity, workflow or application; `*` for all).
 */
export const PERMISSIONS = [
  'definitions.read',
  'definitions.write',
  'entity.read',
  'entity.write',
  'workflow.run',
  'runs.read',
  'runs.read_own',
  'runs.cancel',
  'runs.retry',
  'app.use',
  'keys.manage',
  'users.manage',
  'audit.read',
  'events.send',
  '*',
] as const;

/** One permission of the access policy. */
export type Permission = (typeof PERMISSIONS)[number];

/** The values a row rule's filter may take from the principal. */
export const USER_VALUES = ['{{user.id}}', '{{user.email}}', '{{user.roles}}'] as const;

/** Whether `grant` is `<permission>` or `<permission>:<name or *>` of a known permission. @internal */
export function grantProblem(grant: string): string | undefined {
  const colon = grant.indexOf(':');
  const permission = colon < 0 ? grant : grant.slice(0, colon);
  if (!(PERMISSIONS as readonly string[]).includes(permission))
    return `unknown permission ${JSON.stringify(permission)}; permissions: ${PERMISSIONS.join(', ')}`;
  if (colon >= 0 && grant.length === colon + 1)
    return `grant ${JSON.stringify(grant)} names no resource after ":"; use "${permission}" for all, or "${permission}:<name>"`;
  if (colon >= 0 && permission === '*') return 'the grant "*" takes no resource name';
  return undefined;
}

/** A role: the permissions it grants. */
export const RoleSchema = z.strictObject({
  grants: z.array(z.string().min(1)).describe('`<permission>` or `<permission>:<name or *>`.'),
});

/** A template value of a row rule: `{{user.id}}`, `{{user.email}}` or `{{user.roles}}`, nothing else. */
function templateProblems(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.includes('{{')) return undefined;
  if ((USER_VALUES as readonly string[]).includes(value.trim()))
    return value.trim() === value ? undefined : `write ${value.trim()} without spaces around it`;
  return `${JSON.stringify(value)} is not a value a rule may take from the user; use ${USER_VALUES.join(', ')} as a whole value`;
}

/** A row rule: the rows of `entity` the principals of `roles` see and write. */
export const RowRuleSchema = z
  .strictObject({
    entity: z.string().min(1),
    roles: z.array(z.string().min(1)).min(1),
    filters: z.array(FilterSchema).min(1),
  })
  .superRefine((rule, ctx) => {
    rule.filters.forEach((filter, f) => {
      const values = Array.isArray(filter.value) ? filter.value : [filter.value];
      values.forEach((value, v) => {
        const problem = templateProblems(value);
        const at = Array.isArray(filter.value) ? ['filters', f, 'value', v] : ['filters', f, 'value'];
        if (problem) addIssue(ctx, at, problem);
      });
      if (filter.value === '{{user.roles}}' && filter.operator !== 'IN' && filter.operator !== 'NOT_IN')
        addIssue(ctx, ['filters', f, 'operator'], '{{user.roles}} is a list: use it with IN or NOT_IN');
    });
  });

/** A column rule: columns of `entity` hidden from, or read-only for, the principals of `roles`. */
export const ColumnRuleSchema = z.strictObject({
  entity: z.string().min(1),
  roles: z.array(z.string().min(1)).min(1),
  hidden: z.array(z.string().min(1)).optional(),
  read_only: z.array(z.string().min(1)).optional(),
});

/** The access policy: roles and their grants, row rules and column rules. */
export const AccessPolicySchema = z
  .strictObject({
    roles: z.record(z.string().min(1), RoleSchema),
    rows: z.array(RowRuleSchema).optional(),
    columns: z.array(ColumnRuleSchema).optional(),
  })
  .superRefine((policy, ctx) => {
    for (const [role, { grants }] of Object.entries(policy.roles))
      grants.forEach((grant, g) => {
        const problem = grantProblem(grant);
        if (problem) addIssue(ctx, ['roles', role, 'grants', g], problem);
      });
    const known = Object.keys(policy.roles);
    const checkRoles = (list: 'rows' | 'columns', rules: readonly { roles: string[] }[] | undefined) =>
      rules?.forEach((rule, r) =>
        rule.roles.forEach((role, k) => {
          if (!Object.hasOwn(policy.roles, role))
            addIssue(
              ctx,
              [list, r, 'roles', k],
              `unknown role ${JSON.stringify(role)}; roles: ${known.join(', ') || '(none)'}`,
            );
        }),
      );
    checkRoles('rows', policy.rows);
    checkRoles('columns', policy.columns);
  });

/** A role of the access policy. */
export type Role = z.output<typeof RoleSchema>;
/** A row rule of the access policy. */
export type RowRule = z.output<typeof RowRuleSchema>;
/** A column rule of the access policy. */
export type ColumnRule = z.output<typeof ColumnRuleSchema>;
/** The access policy: `new Engine({ access })`, `access.json`, `PUT /access`. */
export type AccessPolicy = z.output<typeof AccessPolicySchema>;
