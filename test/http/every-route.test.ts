// Every route of /openapi.json (ROUTE_LIST) tried against examples/app and its access policy
// (DESIGN 17 and 18, issue 38 item 7): without credentials it is 401 with WWW-Authenticate (a
// screen sends the browser to sign in), with a key whose only role grants nothing it is 403 and
// nothing changes, and with an admin key it answers. Each path parameter names something that
// exists, so the permission check is what decides. A route added to the table without a fixture
// here fails, by name.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { ROUTE_LIST } from '../../src/http/routes.js';
import type { Route } from '../../src/http/route.js';
import { loadProject } from '../../src/node/index.js';
import type { Collection, StorageAdapter } from '../../src/adapters/types.js';
import type { Engine, Entity, MemorySpreadsheets } from '../../src/index.js';

const ORIGIN = 'http://127.0.0.1:8787';
const PASSWORD = 'correct horse battery staple';

/** The routes answered without credentials, and why: anything else needs a principal. */
const PUBLIC = new Set([
  'openapi',
  'hooks.call',
  'session.signInPage',
  'session.signIn',
  'session.signOut',
  'session.oidcStart',
  'session.oidcCallback',
  'approvals.linkPage',
  'approvals.linkDecide',
  'console.script',
]);

/** Every collection of the storage, so that a new one is part of "nothing changed" (the type says so). */
const COLLECTIONS: Record<Collection, true> = {
  entities: true,
  relationships: true,
  workflows: true,
  applications: true,
  scripts: true,
  runs: true,
  run_keys: true,
  triggers: true,
  trigger_state: true,
  form_submissions: true,
  access: true,
  audit: true,
  definition_versions: true,
  api_keys: true,
  users: true,
  user_emails: true,
  sessions: true,
  sign_in_attempts: true,
  oidc_flows: true,
  waits: true,
  open_waits: true,
  wait_slots: true,
  wait_events: true,
  wait_links: true,
};

/** What a fixture knows of the server it is sent to. */
interface Made {
  runId: string;
  /** An approval waiting for the admin role. */
  approvalId: string;
  policy: unknown;
  invoices: unknown;
  openCustomer: Record<string, unknown>;
}

/** A request body: JSON, a script's source or an HTML form. */
type Body = { json: unknown } | { script: string } | { form: Record<string, string> };

/** How one route is called: the names in its path, its body, its query, and what an admin gets. */
interface Fixture {
  params?: Record<string, string>;
  query?: string;
  body?: (made: Made) => Body;
  /** The status an admin key gets (on a public route: anyone, without credentials). */
  admin: number;
  /**
   * What a key granting nothing gets instead of 403, and why; the answer must then show nothing.
   * @default 403 `forbidden`
   */
  nobody?: { status: number; json: unknown; why: string };
  /** Why a route that is no GET changes nothing for an admin either. */
  unchanged?: string;
  /** Headers the route needs besides credentials. */
  headers?: Record<string, string>;
}

const NOTES: Entity = {
  name: 'notes',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'text', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'notes', origin: { row: 0, col: 0 } },
};

const workflow = (made: Made, name: string) => ({ ...made.openCustomer, name });

/** One fixture per route name: a route without one fails the test below. */
const FIXTURES: Record<string, Fixture> = {
  'catalog.registerEntity': {
    body: () => ({ json: { ...NOTES, name: 'memos', spreadsheet_config: sheetOf('memos') } }),
    admin: 201,
  },
  'catalog.upsertEntity': {
    body: () => ({ json: { ...NOTES, description: 'Notes on customers' } }),
    admin: 200,
  },
  'catalog.createRelationship': {
    body: () => ({
      json: {
        name: 'notes_customer',
        relationship_type: 'foreign_key',
        source_entity: 'notes',
        target_entity: 'customers',
        foreign_key_config: {
          source_columns: ['customer_id'],
          target_columns: ['id'],
          enforce_foreign_key: false,
        },
      },
    }),
    admin: 201,
  },
  'catalog.listEntities': { admin: 200 },
  'catalog.getEntityDefinition': { params: { name: 'customers' }, admin: 200 },
  'catalog.readEntity': {
    params: { name: 'customers' },
    body: () => ({ json: {} }),
    admin: 200,
    unchanged: 'a read sent as POST (its body is the query)',
  },
  'catalog.writeRows': {
    params: { name: 'customers' },
    body: () => ({
      json: {
        write_mode: 'append',
        rows: [{ id: 9, name: 'Mallory', city: 'Nowhere', owner: 'mallory@example.com', credit_limit: 1 }],
      },
    }),
    admin: 200,
  },
  'workflows.create': { body: (made) => ({ json: workflow(made, 'hello') }), admin: 201 },
  'workflows.list': { admin: 200 },
  'workflows.get': { params: { name: 'invoice' }, admin: 200 },
  'workflows.replace': {
    params: { name: 'open_customer' },
    body: (made) => ({ json: { ...made.openCustomer, description: 'changed' } }),
    admin: 200,
  },
  'workflows.delete': { params: { name: 'spare' }, admin: 204 },
  'workflows.run': { params: { name: 'open_customer' }, body: () => ({ json: { id: 1 } }), admin: 200 },
  'runs.list': { query: '?limit=10', admin: 200 },
  'runs.get': { params: { id: '{run}' }, admin: 200 },
  'runs.events': { params: { id: '{run}' }, admin: 200 },
  'console.home': { admin: 303 },
  'console.script': { admin: 200 },
  'console.runs': { query: '?workflow=open_customer', admin: 200 },
  'console.run': { params: { id: '{run}' }, admin: 200 },
  'console.cancel': {
    params: { id: '{run}' },
    body: () => ({ form: {} }),
    admin: 303,
    unchanged: 'the run has ended: nothing to cancel',
  },
  'console.retry': { params: { id: '{run}' }, body: () => ({ form: { from_step: '' } }), admin: 303 },
  'console.bulk': {
    body: () => ({ form: { action: 'cancel', workflow: 'approve_note', status: 'waiting' } }),
    admin: 200,
    unchanged: 'without `confirm` the form only counts the runs (a dry run)',
  },
  'console.workflows': { admin: 200 },
  'console.workflow': { params: { name: 'open_customer' }, admin: 200 },
  'console.approvals': { admin: 200 },
  'console.triggers': { admin: 200 },
  'console.queue': { admin: 200 },
  'console.audit': { admin: 200 },
  'runs.retry': { params: { id: '{run}' }, body: () => ({ json: {} }), admin: 202 },
  'runs.bulk': {
    body: () => ({ json: { action: 'retry', filter: { workflow: 'open_customer' } } }),
    admin: 200,
  },
  'runs.cancel': {
    params: { id: '{run}' },
    admin: 200,
    unchanged: 'the run has ended: `{ cancelled: false }`',
  },
  'triggers.create': {
    body: () => ({
      json: { name: 'hook2', type: 'webhook', workflow_name: 'open_customer', input_data: { id: 1 } },
    }),
    admin: 201,
  },
  'triggers.list': { admin: 200 },
  'triggers.get': { params: { name: 'hook' }, admin: 200 },
  'triggers.delete': { params: { name: 'hook' }, admin: 204 },
  'hooks.call': { params: { name: 'hook' }, body: () => ({ json: {} }), admin: 202 },
  'workflows.graph': { params: { name: 'invoice' }, admin: 200 },
  'runs.timeline': { params: { id: '{run}' }, admin: 200 },
  'runs.page': { params: { id: '{run}' }, admin: 200 },
  'scripts.list': { admin: 200 },
  'scripts.put': { params: { name: 'note.js' }, body: () => ({ script: 'log(1)' }), admin: 201 },
  'scripts.get': { params: { name: 'add_customer.js' }, admin: 200 },
  'scripts.delete': { params: { name: 'spare.js' }, admin: 204 },
  'applications.list': { admin: 200 },
  'applications.put': { params: { name: 'invoices' }, body: (made) => ({ json: made.invoices }), admin: 200 },
  'applications.get': { params: { name: 'invoices' }, admin: 200 },
  'applications.delete': { params: { name: 'spare' }, admin: 204 },
  'applications.renderScreen': { params: { name: 'invoices', url: 'start' }, admin: 200 },
  // "Make an invoice" for the customer picked: runs invoice and redirects to the invoice screen.
  'applications.submitForm': {
    params: { name: 'invoices', url: 'start', component: 'make' },
    body: () => ({ form: { customer_id: '1' } }),
    admin: 303,
  },
  // The CSV of a grid of the `reports` app that server() stores.
  'applications.exportGrid': {
    params: { name: 'reports', url: 'list', grid: 'customers' },
    query: '?customers_sort=name',
    admin: 200,
  },
  openapi: { admin: 200 },
  'approvals.list': {
    admin: 200,
    nobody: { status: 200, json: [], why: 'a role no approval is assigned to has nothing in its inbox' },
  },
  'approvals.get': {
    params: { id: '{approval}' },
    admin: 200,
    nobody: {
      status: 404,
      json: expect.objectContaining({ code: 'not_found' }),
      why: 'an approval the key may neither decide nor read (its run) is not found, as a missing one',
    },
  },
  'approvals.decide': {
    params: { id: '{approval}' },
    body: () => ({ json: { approved: true, comment: 'fine' } }),
    admin: 200,
    nobody: {
      status: 404,
      json: expect.objectContaining({ code: 'not_found' }),
      why: 'an approval the key may neither decide nor read (its run) is not found, as a missing one',
    },
  },
  'approvals.decideForm': {
    params: { id: '{approval}' },
    body: () => ({ form: { decision: 'approve' } }),
    admin: 303,
    nobody: {
      status: 404,
      json: expect.objectContaining({ code: 'not_found' }),
      why: 'an approval the key may neither decide nor read (its run) is not found, as a missing one',
    },
  },
  'approvals.link': {
    params: { id: '{approval}' },
    body: () => ({ json: { email: 'outside@example.com' } }),
    admin: 201,
    nobody: {
      status: 404,
      json: expect.objectContaining({ code: 'not_found' }),
      why: 'an approval the key may neither decide nor read (its run) is not found, as a missing one',
    },
  },
  // A link that was never made: its page and form answer 404 to anyone (the link flow is tried in
  // test/http/approvals.test.ts).
  'approvals.linkPage': {
    params: { id: '{approval}' },
    query: '?token=swa_0123456789abcdef0123',
    admin: 404,
  },
  'approvals.linkDecide': {
    params: { id: '{approval}' },
    body: () => ({ form: { token: 'swa_0123456789abcdef0123', decision: 'approve' } }),
    admin: 404,
  },
  'events.send': { params: { event: 'note.added' }, body: () => ({ json: { id: 1 } }), admin: 200 },
  'audit.list': { admin: 200 },
  'workflows.versions': { params: { name: 'invoice' }, admin: 200 },
  'scripts.versions': { params: { name: 'add_customer.js' }, admin: 200 },
  'applications.versions': { params: { name: 'invoices' }, admin: 200 },
  'triggers.versions': { params: { name: 'hook' }, admin: 200 },
  'catalog.entityVersions': { params: { name: 'customers' }, admin: 200 },
  'access.get': { admin: 200 },
  'access.put': { body: (made) => ({ json: made.policy }), admin: 200 },
  'session.signInPage': { query: '?next=%2Fworkflows', admin: 200 },
  'session.signIn': {
    body: () => ({ form: { email: 'ada@example.com', password: PASSWORD, next: '/workflows' } }),
    admin: 303,
  },
  'session.signOut': { admin: 303 },
  // Without `auth.oidc` (no provider here) both answer their 404 page; the flow itself is tried
  // against a provider elsewhere.
  'session.oidcStart': { query: '?next=%2Fworkflows', admin: 404 },
  'session.oidcCallback': { query: '?code=x&state=y', admin: 404 },
  // A tool call of the MCP server: the engine refuses the run (an error result of the protocol).
  'mcp.post': {
    headers: { accept: 'application/json, text/event-stream' },
    body: () => ({
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'open_customer', arguments: { id: 1 } },
      },
    }),
    admin: 200,
    nobody: {
      status: 200,
      json: {
        jsonrpc: '2.0',
        id: 1,
        result: {
          content: [
            {
              type: 'text',
              text: expect.stringMatching(/^forbidden: key "[^"]+" may not workflow\.run:open_customer/),
            },
          ],
          isError: true,
        },
      },
      why: 'the MCP answer to a refused call is a tool error result naming the permission',
    },
  },
};

function sheetOf(name: string) {
  return { spreadsheet_id: 'shop', sheet_name: name, origin: { row: 0, col: 0 } };
}

/**
 * examples/app with its policy and a role `nobody` that grants nothing, a resource behind every
 * path parameter (a spare workflow, script and application to delete, a webhook trigger, a run),
 * and three keys: admin, nobody.
 */
async function server() {
  const { engine, spreadsheets } = await loadProject('examples/app');
  const sheets = spreadsheets as MemorySpreadsheets;
  const policy = (await engine.access.get())!;
  const withNobody = { ...policy, roles: { ...policy.roles, nobody: { grants: [] } } };
  await engine.access.put(withNobody);
  sheets.setSheet('shop', 'notes', [['id', 'customer_id', 'text']]);
  sheets.setSheet('shop', 'memos', [['id', 'customer_id', 'text']]);
  await engine.catalog.registerEntity(NOTES);
  const openCustomer = (await engine.workflows.get('open_customer')) as unknown as Record<string, unknown>;
  await engine.workflows.create({ ...openCustomer, name: 'spare' } as never);
  await engine.scripts.put('spare.js', 'log(1)');
  const invoices = await engine.applications.get('invoices');
  const { name: _name, ...config } = invoices as unknown as Record<string, unknown>;
  await engine.applications.put('spare', config as never);
  await engine.applications.put('reports', {
    start_screen_url: 'list',
    screens: [
      {
        url: 'list',
        components: [
          [
            {
              name: 'customers',
              type: 'datagrid',
              datagrid: { entity_name: 'customers', sortable: true, export: true },
            },
          ],
        ],
      },
    ],
  });
  await engine.triggers.create({
    name: 'hook',
    type: 'webhook',
    workflow_name: 'open_customer',
    input_data: { id: 1 },
  });
  await engine.users.create({ email: 'ada@example.com', name: 'Ada', roles: ['sales'], password: PASSWORD });
  const run = await engine.run('open_customer', { id: 2 });
  expect(run.status).toBe('succeeded');
  await engine.workflows.create({
    name: 'approve_note',
    steps: [
      {
        name: 'ok',
        type: 'wait',
        wait_data: { kind: 'approval', title: 'Keep the note?', assignees: { roles: ['admin'] } },
      },
    ],
    wires: [],
  });
  const waiting = await engine.run('approve_note', {});
  expect(waiting.status).toBe('waiting');
  const admin = await engine.keys.create({ name: 'admin', roles: ['admin'] });
  const nobody = await engine.keys.create({ name: 'nobody', roles: ['nobody'] });
  const handler = createHandler(engine);
  const made: Made = {
    runId: run.id,
    approvalId: waiting.steps[0]!.wait!.id,
    policy: withNobody,
    invoices: config,
    openCustomer,
  };
  return { engine, sheets, handler, made, admin: admin.secret, nobody: nobody.secret };
}

/** The request a fixture describes, with `credentials` (a bearer key) or none. */
function request(route: Route, fixture: Fixture, made: Made, key?: string): Request {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = fixture.params?.[name];
    if (value === undefined) throw new Error(`the fixture of ${route.name} has no path parameter "${name}"`);
    const named = value === '{run}' ? made.runId : value === '{approval}' ? made.approvalId : value;
    return encodeURIComponent(named);
  });
  const headers: Record<string, string> = { ...fixture.headers };
  if (key !== undefined) headers['authorization'] = `Bearer ${key}`;
  // A request that changes something comes from the server's own pages, as a browser says.
  if (route.method !== 'GET') headers['sec-fetch-site'] = 'same-origin';
  const body = fixture.body?.(made);
  if (route.body?.required && body === undefined) throw new Error(`the fixture of ${route.name} has no body`);
  let text: string | undefined;
  if (body && 'json' in body) {
    headers['content-type'] = 'application/json';
    text = JSON.stringify(body.json);
  } else if (body && 'script' in body) {
    headers['content-type'] = 'text/plain';
    text = body.script;
  } else if (body) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    text = new URLSearchParams(body.form).toString();
  }
  return new Request(`${ORIGIN}${path}${fixture.query ?? ''}`, {
    method: route.method,
    headers,
    ...(text === undefined ? {} : { body: text }),
  });
}

/**
 * What the engine holds: every stored value (the audit log, which records a denied change, is
 * kept apart by the storage; a key's last use is noted apart too) and every cell of every
 * entity's sheet.
 */
async function snapshot(engine: Engine, sheets: MemorySpreadsheets): Promise<unknown> {
  const storage: StorageAdapter = engine.options.storage;
  const stored: Record<string, unknown> = {};
  for (const collection of Object.keys(COLLECTIONS) as Collection[]) {
    const entries = await storage.list(collection);
    stored[collection] = entries.filter(({ key }) => !key.endsWith('/last_used'));
  }
  const cells: Record<string, unknown> = {};
  for (const entity of await engine.catalog.listEntities()) {
    const { spreadsheet_id, sheet_name } = entity.spreadsheet_config;
    cells[entity.name] = sheets.cells(spreadsheet_id, sheet_name);
  }
  return { stored, cells, runs: (await engine.listRuns({ limit: 1000 })).runs.length };
}

/** The status, body and a few headers of an answer, for assertions that show what came back. */
async function seen(response: Response) {
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    authenticate: response.headers.get('www-authenticate'),
    location: response.headers.get('location'),
    text: text.slice(0, 300),
  };
}

const SCREEN_GET = 'applications.renderScreen';
const SCREEN_FORM = 'applications.submitForm';
const SCREEN_EXPORT = 'applications.exportGrid';

describe('every route of the API where the engine has an access policy', () => {
  it('each route has a fixture, and the public ones are those that must answer anyone', () => {
    const missing = ROUTE_LIST.map((route) => route.name).filter((name) => !Object.hasOwn(FIXTURES, name));
    expect(missing, 'routes without a fixture in test/http/every-route.test.ts').toEqual([]);
    // A route answered without credentials is one of those named above, never by accident.
    const open = ROUTE_LIST.filter((route) => route.public).map((route) => route.name);
    expect(
      open.filter((name) => !PUBLIC.has(name)),
      'public routes not in PUBLIC',
    ).toEqual([]);
  });

  for (const route of ROUTE_LIST) {
    const label = `${route.method} ${route.path} (${route.name})`;
    if (route.public) {
      it(`${label} answers without credentials`, async () => {
        const fixture = FIXTURES[route.name];
        if (!fixture) throw new Error(`${route.name} has no fixture in test/http/every-route.test.ts`);
        const { handler, made } = await server();
        const answer = await seen(await handler(request(route, fixture, made)));
        expect(answer, label).toMatchObject({ status: fixture.admin });
      });
      continue;
    }

    it(`${label}: 401 without credentials, 403 for a role granting nothing (nothing changed), answered for an admin`, async () => {
      const fixture = FIXTURES[route.name];
      if (!fixture) throw new Error(`${route.name} has no fixture in test/http/every-route.test.ts`);
      const { engine, sheets, handler, made, admin, nobody } = await server();

      // (a) Without credentials. A screen sends the browser to the sign-in page; a screen's form
      // is 401 like the API: a redirect would drop what the form carried, and the browser shows
      // the 401 (the form's page had sent it to sign in already).
      const before = await snapshot(engine, sheets);
      const anonymous = await seen(await handler(request(route, fixture, made)));
      if (route.name === SCREEN_GET) {
        expect(anonymous, label).toMatchObject({ status: 303 });
        expect(anonymous.location).toMatch(/^\/sign-in\?next=/);
      } else {
        expect(anonymous, label).toMatchObject({
          status: 401,
          authenticate: 'Bearer realm="stepwire"',
        });
      }
      expect(await snapshot(engine, sheets), `${label} without credentials changed something`).toEqual(
        before,
      );

      // (b) A key whose only role grants nothing.
      const refused = await seen(await handler(request(route, fixture, made, nobody)));
      if (fixture.nobody) {
        expect(refused, `${label}: ${fixture.nobody.why}`).toMatchObject({ status: fixture.nobody.status });
        expect(JSON.parse(refused.text)).toEqual(fixture.nobody.json);
      } else if (route.name === SCREEN_GET || route.name === SCREEN_FORM || route.name === SCREEN_EXPORT) {
        // Screens answer with pages, their refusals too.
        expect(refused, label).toMatchObject({ status: 403 });
        expect(refused.type).toContain('text/html');
        expect(refused.text).toContain('Forbidden');
      } else {
        expect(refused, label).toMatchObject({ status: 403, type: 'application/problem+json' });
        expect(JSON.parse(refused.text)).toMatchObject({ code: 'forbidden' });
      }
      expect(await snapshot(engine, sheets), `${label} refused, yet something changed`).toEqual(before);

      // (c) An admin key. What changes something does change it for an admin, so "nothing changed"
      // above says the refusal kept it out, not that the fixture wrote nothing.
      const allowed = await seen(await handler(request(route, fixture, made, admin)));
      expect(allowed, label).toMatchObject({ status: fixture.admin });
      if (route.method !== 'GET' && fixture.unchanged === undefined)
        expect(await snapshot(engine, sheets), `${label} as admin changed nothing`).not.toEqual(before);
    });
  }
});
