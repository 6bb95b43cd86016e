import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { expect } from 'vitest';

/**
 * examples/app's policy plus a role `opener` that may run open_customer only, read customers
 * (only the rows Ada owns: a row rule), and read its own runs.
 */
export function policyWithOpener(): Record<string, any> {
  const policy = JSON.parse(readFileSync('examples/app/access.json', 'utf8')) as Record<string, any>;
  return {
    ...policy,
    roles: {
      ...policy['roles'],
      opener: { grants: ['workflow.run:open_customer', 'entity.read:customers', 'runs.read_own'] },
    },
    rows: [
      ...policy['rows'],
      {
        entity: 'customers',
        roles: ['opener'],
        filters: [{ column: 'owner', operator: 'EQUALS', value: 'ada@example.com' }],
      },
    ],
  };
}

/** A copy of examples/app in `dir` whose access.json has the role `opener`. */
export function appWithOpener(dir: string): string {
  const project = join(dir, 'app');
  cpSync('examples/app', project, { recursive: true });
  writeFileSync(join(project, 'access.json'), JSON.stringify(policyWithOpener(), null, 2));
  return project;
}

/** The names of the tools a client is offered. */
export async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name).sort();
}

/** The text of a tool result's first content. */
export function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text?: string }[] }).content;
  return content[0]?.text ?? '';
}

/**
 * What the service sees over any transport: every workflow of examples/app as a tool with its input
 * schema (and `more`), open_customer answering its output, invalid arguments refused naming the field (and no run
 * started, where `runs()` counts them), read_entity reading every customer, entities as resources.
 */
export async function expectServiceTools(
  client: Client,
  runs?: () => Promise<number>,
  more: string[] = [],
): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(
    ['add_customer', 'add_order', 'get_run', 'invoice', 'open_customer', 'read_entity', ...more].sort(),
  );
  const open = tools.find((t) => t.name === 'open_customer')!;
  expect(open.inputSchema).toEqual({
    type: 'object',
    properties: { id: { type: 'integer', minimum: 1 } },
    required: ['id'],
  });
  expect(open.description).toContain("Opens a customer's screen");

  const ok = await client.callTool({ name: 'open_customer', arguments: { id: 3 } });
  expect(ok.isError ?? false).toBe(false);
  expect(ok.structuredContent).toEqual({ id: 3 });
  expect(JSON.parse(textOf(ok))).toEqual({ id: 3 });

  const before = await runs?.();
  const bad = await client.callTool({ name: 'add_customer', arguments: { id: 0, city: 7 } });
  expect(bad.isError).toBe(true);
  expect(textOf(bad)).toMatch(/^Invalid arguments, nothing was run: /);
  expect(textOf(bad)).toMatch(/id/);
  expect(textOf(bad)).toMatch(/name/);
  expect(textOf(bad)).toMatch(/city/);
  expect(await runs?.()).toBe(before);

  const read = await client.callTool({
    name: 'read_entity',
    arguments: { entity_name: 'customers', operation: { select_columns: [{ column: 'name' }] } },
  });
  expect(read.isError ?? false).toBe(false);
  expect(JSON.stringify(read.structuredContent)).toContain('Grace Hopper');
  const unknown = await client.callTool({
    name: 'read_entity',
    arguments: { entity_name: 'customers', operation: { select_columns: [{ column: 'shoe_size' }] } },
  });
  expect(unknown.isError).toBe(true);
  expect(textOf(unknown)).toMatch(/shoe_size/);
  const wrong = await client.callTool({ name: 'read_entity', arguments: { entity_name: 'customers' } });
  expect(wrong.isError).toBe(true);
  expect(textOf(wrong)).toMatch(/^Nothing was read: operation/);

  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri).sort()).toEqual([
    'stepwire://entities/customers',
    'stepwire://entities/orders',
  ]);
  const customers = await client.readResource({ uri: 'stepwire://entities/customers' });
  const definition = JSON.parse((customers.contents[0] as { text: string }).text);
  expect(definition.columns.map((c: { name: string }) => c.name)).toContain('credit_limit');
}

/**
 * What a key of role `opener` sees over any transport: only open_customer (and read_entity,
 * get_run), which it calls; add_customer is refused and starts nothing; read_entity answers only
 * the rows of its row rule, and refuses orders; customers is its only resource.
 */
export async function expectOpenerTools(client: Client, runs?: () => Promise<number>): Promise<void> {
  expect(await toolNames(client)).toEqual(['get_run', 'open_customer', 'read_entity']);
  const ok = await client.callTool({ name: 'open_customer', arguments: { id: 1 } });
  expect(ok.structuredContent).toEqual({ id: 1 });
  const runId = (ok._meta as Record<string, string>)['stepwire/run_id']!;
  const again = await client.callTool({ name: 'get_run', arguments: { run_id: runId } });
  expect(again.structuredContent).toEqual({ id: 1 });

  const before = await runs?.();
  const refused = await client.callTool({
    name: 'add_customer',
    arguments: { id: 9, name: 'Mallory', city: 'Nowhere' },
  });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toMatch(/^forbidden: .*workflow\.run/);
  expect(await runs?.()).toBe(before);

  const read = await client.callTool({
    name: 'read_entity',
    arguments: {
      entity_name: 'customers',
      operation: { select_columns: [{ column: 'id' }, { column: 'name' }] },
    },
  });
  expect(read.isError ?? false).toBe(false);
  const text = JSON.stringify(read.structuredContent);
  expect(text).toContain('Ada Lovelace');
  expect(text).toContain('Linus Torvalds');
  expect(text).not.toContain('Grace');

  const orders = await client.callTool({
    name: 'read_entity',
    arguments: { entity_name: 'orders', operation: {} },
  });
  expect(orders.isError).toBe(true);
  expect(textOf(orders)).toMatch(/^forbidden: /);

  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri)).toEqual(['stepwire://entities/customers']);
}
