import { describe, expect, it } from 'vitest';
import {
  HttpProblemError,
  buildOpenApi,
  createClient,
  createHandler,
  type RouteInfo,
  type StepwireClient,
} from '../../src/http/index.js';
import { ROUTE_LIST } from '../../src/http/routes.js';
import { appEngine } from '../app/helpers.js';
import { shopEngine } from '../engine/helpers.js';
import { customersEntity, ordersEntity } from '../fixtures.js';
import { lookupWorkflow } from './helpers.js';

const pathParams = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
const templateOf = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);

describe('the route table is the one description of the API', () => {
  it('puts every route in the OpenAPI document, and nothing else', () => {
    const doc = buildOpenApi() as any;
    for (const route of ROUTE_LIST) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect(op?.operationId, `${route.method} ${route.path}`).toBe(route.name);
      expect(Object.keys(op.responses).sort()).toEqual(
        [
          ...new Set([
            ...Object.keys(route.responses),
            ...route.problems.map(String),
            // A path parameter that is not valid percent-encoding is 400 invalid_path.
            ...(route.path.includes('{') ? ['400'] : []),
            // Without credentials where the engine has an access policy, but on the public routes.
            ...(route.public ? [] : ['401']),
            '403',
            // An answer too large to send as JSON is a limit (422).
            '422',
            '500',
          ]),
        ].sort(),
      );
      const inPath = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      expect(inPath, route.name).toEqual(pathParams(route.path));
      expect(op.requestBody?.required, route.name).toBe(route.body?.required);
    }
    const operations = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item));
    expect(operations.map((op) => op.operationId).sort()).toEqual(ROUTE_LIST.map((r) => r.name).sort());
  });

  it('sends every client method to the route the table names, which answers a status the table lists', async () => {
    const { engine } = await shopEngine();
    const seen: RouteInfo[] = [];
    const handler = createHandler(engine, {
      basePath: '/api',
      authorize: (_request, route) => void seen.push(route),
    });
    let status = 0;
    // Once putAccess stores a policy, every call needs credentials: this key's role holds every permission.
    const { secret } = await engine.keys.create({ name: 'routes test', roles: ['admin'] });
    const client = createClient({
      baseUrl: 'http://stepwire.test/api',
      headers: { authorization: `Bearer ${secret}` },
      retry: 0,
      fetch: async (input, init) => {
        const response = await handler(new Request(input, init));
        status = response.status;
        return response;
      },
    });
    const clients = { ...customersEntity, name: 'clients' };
    const app = {
      start_screen_url: 'home',
      screens: [
        {
          url: 'home',
          components: [
            [
              {
                name: 'grid',
                type: 'datagrid' as const,
                datagrid: { entity_name: 'customers', export: true },
              },
            ],
          ],
        },
      ],
    };
    let runId = '';
    const calls: { [M in keyof StepwireClient]: [operation: string, call: () => Promise<unknown>] } = {
      audit: ['audit.list', () => client.audit.list({ limit: 1 })],
      putAccess: ['access.put', () => client.putAccess({ roles: { admin: { grants: ['*'] } } })],
      getAccess: ['access.get', () => client.getAccess()],
      registerEntity: ['catalog.registerEntity', () => client.registerEntity(clients)],
      upsertEntity: ['catalog.upsertEntity', () => client.upsertEntity(clients)],
      createRelationship: [
        'catalog.createRelationship',
        () =>
          client.createRelationship({
            name: 'orders_clients',
            relationship_type: 'foreign_key',
            source_entity: ordersEntity.name,
            target_entity: 'clients',
            foreign_key_config: {
              source_columns: ['customer_id'],
              target_columns: ['id'],
              enforce_foreign_key: false,
            },
          }),
      ],
      listEntities: ['catalog.listEntities', () => client.listEntities()],
      getEntityDefinition: ['catalog.getEntityDefinition', () => client.getEntityDefinition('clients')],
      readEntity: ['catalog.readEntity', () => client.readEntity('customers', { page_size: 1 })],
      writeRows: [
        'catalog.writeRows',
        () => client.writeRows('clients', { write_mode: 'upsert', rows: [{ id: 1, name: 'A' }] }),
      ],
      createWorkflow: ['workflows.create', () => client.createWorkflow(lookupWorkflow)],
      replaceWorkflow: ['workflows.replace', () => client.replaceWorkflow(lookupWorkflow)],
      getWorkflow: ['workflows.get', () => client.getWorkflow(lookupWorkflow.name)],
      listWorkflows: ['workflows.list', () => client.listWorkflows()],
      runWorkflow: [
        'workflows.run',
        async () => (runId = (await client.runWorkflow(lookupWorkflow.name, { id: 1 })).id),
      ],
      startRun: ['workflows.run', () => client.startRun(lookupWorkflow.name, { id: 1 })],
      getRun: ['runs.get', () => client.getRun(runId)],
      runEvents: [
        'runs.events',
        async () => {
          const events = await client.runEvents(runId);
          expect(events[0]).toMatchObject({ type: 'run.started', run_id: runId });
          expect(events.at(-1)).toMatchObject({ type: 'run.finished', status: 'succeeded' });
        },
      ],
      cancelRun: ['runs.cancel', () => client.cancelRun(runId)],
      listRuns: ['runs.list', () => client.listRuns({ status: 'succeeded', limit: 5 })],
      createTrigger: [
        'triggers.create',
        () =>
          client.createTrigger({
            name: 'hook',
            type: 'webhook',
            workflow_name: lookupWorkflow.name,
            input_data: { id: 1 },
            webhook_data: { secret: 'a secret of sixteen+' },
          }),
      ],
      listTriggers: ['triggers.list', () => client.listTriggers()],
      getTrigger: ['triggers.get', () => client.getTrigger('hook')],
      callHook: ['hooks.call', () => client.callHook('hook', { id: 2 }, { secret: 'a secret of sixteen+' })],
      deleteTrigger: ['triggers.delete', () => client.deleteTrigger('hook')],
      workflowGraph: ['workflows.graph', () => client.workflowGraph(lookupWorkflow.name)],
      runTimeline: ['runs.timeline', () => client.runTimeline(runId)],
      runPage: ['runs.page', () => client.runPage(runId)],
      deleteWorkflow: ['workflows.delete', () => client.deleteWorkflow(lookupWorkflow.name)],
      putScript: ['scripts.put', () => client.putScript('a b.js', '// source')],
      getScript: ['scripts.get', () => client.getScript('a b.js')],
      listScripts: ['scripts.list', () => client.listScripts()],
      deleteScript: ['scripts.delete', () => client.deleteScript('a b.js')],
      putApplication: ['applications.put', () => client.putApplication('shop', app)],
      getApplication: ['applications.get', () => client.getApplication('shop')],
      listApplications: ['applications.list', () => client.listApplications()],
      renderScreen: ['applications.renderScreen', () => client.renderScreen('shop', 'home', { q: '1' })],
      exportGrid: [
        'applications.exportGrid',
        () => client.exportGrid('shop', 'home', 'grid', { grid_sort: 'name' }),
      ],
      deleteApplication: ['applications.delete', () => client.deleteApplication('shop')],
      // Versions outlive a delete: each name above was stored, so each lists its versions.
      workflowVersions: [
        'workflows.versions',
        () => client.workflowVersions(lookupWorkflow.name, { limit: 1 }),
      ],
      scriptVersions: ['scripts.versions', () => client.scriptVersions('a b.js')],
      applicationVersions: ['applications.versions', () => client.applicationVersions('shop')],
      triggerVersions: ['triggers.versions', () => client.triggerVersions('hook', { after: 1 })],
      entityVersions: ['catalog.entityVersions', () => client.entityVersions('clients')],
      openapi: ['openapi', () => client.openapi()],
      // Nothing waits here: the inbox is empty and a made-up approval is not found.
      approvals: [
        'approvals.list',
        async () => {
          expect(await client.approvals.list()).toEqual([]);
        },
      ],
      sendEvent: ['events.send', () => client.sendEvent('order.paid', { order: 1 })],
      retryRun: ['runs.retry', () => client.retryRun(runId, { from_step: 'read' })],
      bulkRuns: [
        'runs.bulk',
        () => client.bulkRuns({ action: 'cancel', filter: { status: 'running' }, dry_run: true }),
      ],
    };
    expect(Object.keys(calls).sort()).toEqual(Object.keys(client).sort());
    for (const [method, [operation, call]] of Object.entries(calls)) {
      seen.length = 0;
      await call();
      const route = ROUTE_LIST.find((r) => r.name === operation)!;
      expect(
        seen.map((r) => r.name),
        method,
      ).toEqual([operation]);
      expect(seen[0]!.method, method).toBe(route.method);
      expect(seen[0]!.path, method).toMatch(templateOf(route.path));
      expect(Object.keys(route.responses), method).toContain(String(status));
    }
    // Every route but the HTML form submission, the sign-in pages and the MCP server (MCP clients
    // speak it) has a client method.
    expect(new Set(Object.values(calls).map(([operation]) => operation))).toEqual(
      new Set(
        ROUTE_LIST.map((r) => r.name).filter(
          (name) =>
            name !== 'applications.submitForm' &&
            !name.startsWith('session.') &&
            name !== 'mcp.post' &&
            !['approvals.get', 'approvals.decide', 'approvals.link'].includes(name) &&
            // The console's pages and forms.
            !name.startsWith('console.') &&
            !['approvals.decideForm', 'approvals.linkPage', 'approvals.linkDecide'].includes(name),
        ),
      ),
    );
  });

  it('refuses a success status the route does not list', async () => {
    const client = createClient({
      baseUrl: 'http://stepwire.test',
      retry: 0,
      fetch: async () => new Response('[]', { status: 202, headers: { 'content-type': 'application/json' } }),
    });
    const error = (await client.listWorkflows().catch((e: unknown) => e)) as HttpProblemError;
    expect(error).toBeInstanceOf(HttpProblemError);
    expect(error.status).toBe(202);
  });

  it("hands an action the query string as the route's query schema reads it", async () => {
    const { engine } = await appEngine();
    const handler = createHandler(engine);
    const screen = await handler(
      new Request('http://localhost/applications/shop/screens/orders?customer=7&customer=8'),
    );
    expect(await screen.text()).toContain('<h1>Orders of customer 7</h1>');
    const form = new FormData();
    form.set('note', 'a b');
    form.set('amount', '4');
    const submitted = await handler(
      new Request('http://localhost/applications/shop/screens/notes/forms/add?who=Zo%C3%AB', {
        method: 'POST',
        body: form,
      }),
    );
    expect(submitted.status).toBe(303);
    expect(submitted.headers.get('location')).toBe(
      '/applications/shop/screens/notes?who=a%20b&from=Zo%C3%AB',
    );
  });
});
