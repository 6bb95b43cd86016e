import { ACCESS_ROUTES } from './access-routes.js';
import { AUDIT_ROUTES } from './audit-routes.js';
import { APPROVAL_ROUTES } from './approval-routes.js';
import { SIGN_IN_ROUTES } from './sign-in-routes.js';
import { OIDC_ROUTES } from './oidc-routes.js';
import { CATALOG_ROUTES } from './catalog-routes.js';
import { PICTURE_ROUTES } from './picture-routes.js';
import { RESOURCE_ROUTES } from './resource-routes.js';
import type { Route } from './route.js';
import { TRIGGER_ROUTES } from './trigger-routes.js';
import { VERSION_ROUTES } from './version-routes.js';
import { WORKFLOW_ROUTES } from './workflow-routes.js';
import { MCP_ROUTES } from '../mcp/route.js';
import { CONSOLE_ROUTES } from './console/routes.js';

/**
 * Every operation of the HTTP API, each written once: the handler routes by it, `buildOpenApi`
 * describes it and `createClient` calls it. Adding an operation is adding one entry to a group.
 * Where a literal segment and a parameter could both match, the literal wins, whatever the order.
 * @internal
 */
export const ROUTES = [
  ...CATALOG_ROUTES,
  ...WORKFLOW_ROUTES,
  ...TRIGGER_ROUTES,
  ...PICTURE_ROUTES,
  ...RESOURCE_ROUTES,
  ...AUDIT_ROUTES,
  ...APPROVAL_ROUTES,
  ...VERSION_ROUTES,
  ...ACCESS_ROUTES,
  ...SIGN_IN_ROUTES,
  ...OIDC_ROUTES,
  ...MCP_ROUTES,
  ...CONSOLE_ROUTES,
] as const;

/** Any route of {@link ROUTES}. @internal */
export type AnyRoute = (typeof ROUTES)[number];

/** Name of an operation, e.g. `workflows.run`. @internal */
export type RouteName = AnyRoute['name'];

/** The table as the handler and the OpenAPI builder see it: routes of any shape. @internal */
export const ROUTE_LIST: readonly Route[] = ROUTES;
