// The MCP server at /mcp of createHandler, over a real server on 127.0.0.1, through the official
// SDK's client (Streamable HTTP): listing, calling, invalid arguments, a key limited to one
// workflow, row rules on read_entity, progress notifications, and the handler's own checks
// (401 without credentials, a cross-site browser request refused).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { loadProject, serve, type RunningServer } from '../../src/node/index.js';
import type { Engine } from '../../src/index.js';
import { expectOpenerTools, expectServiceTools, policyWithOpener, textOf } from './helpers.js';

let engine: Engine;
let server: RunningServer;
let admin = '';
let opener = '';

beforeAll(async () => {
  ({ engine } = await loadProject('examples/app'));
  await engine.access.put(policyWithOpener() as never);
  await engine.scripts.put('boom.js', "throw new Error('the ledger is closed');");
  await engine.workflows.create({
    name: 'broken',
    steps: [
      {
        name: 'post',
        type: 'atlas',
        atlas_data: {
          action: 'transform',
          input_data: { language: 'javascript', code_file: 'boom.js' },
          input_entities: [],
          output_entities: [{ name: 'customers', write_mode: 'append' }],
        },
      },
    ],
    wires: [],
  } as never);
  admin = (await engine.keys.create({ name: 'admin', roles: ['admin'] })).secret;
  opener = (await engine.keys.create({ name: 'agent', roles: ['opener'] })).secret;
  server = await serve(createHandler(engine), { port: 0, hostname: '127.0.0.1' });
});
afterAll(async () => {
  await server?.close();
});

/** An SDK client connected to /mcp with `key`. */
async function connect(key: string | undefined): Promise<Client> {
  const client = new Client({ name: 'stepwire-test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    ...(key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {}),
  });
  await client.connect(transport);
  return client;
}

const runCount = async () => (await engine.listRuns({ limit: 1000 })).runs.length;

describe('MCP over Streamable HTTP at /mcp', () => {
  it('lists and calls the workflows an admin key may run, refuses invalid arguments naming each field', async () => {
    const client = await connect(admin);
    try {
      await expectServiceTools(client, runCount, ['broken']);
      // The runs the tool calls started carry the key as their initiator.
      const runs = (await engine.listRuns({ limit: 1000 })).runs;
      expect(runs.some((r) => r.initiator?.kind === 'key')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('a failed run is an error result naming the step', async () => {
    const client = await connect(admin);
    try {
      const failed = await client.callTool({ name: 'broken', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(textOf(failed)).toMatch(
        /^The run \S+ of workflow "broken" failed at step "post": .*the ledger is closed/,
      );
      expect(failed.structuredContent).toMatchObject({ status: 'failed', error: { step: 'post' } });
    } finally {
      await client.close();
    }
  });

  it('a key limited to one workflow sees and calls only that one; read_entity keeps to its row rule', async () => {
    const client = await connect(opener);
    try {
      await expectOpenerTools(client, runCount);
    } finally {
      await client.close();
    }
  });

  it('sends progress notifications from the run events when the call asks for them', async () => {
    const client = await connect(admin);
    try {
      const seen: { progress: number; message?: string }[] = [];
      const result = await client.callTool(
        { name: 'add_customer', arguments: { id: 40, name: 'Katherine Johnson', city: 'Hampton' } },
        undefined,
        {
          onprogress: (p) =>
            void seen.push({ progress: p.progress, ...(p.message ? { message: p.message } : {}) }),
        },
      );
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toMatchObject({ id: 40 });
      expect(seen).toEqual([
        { progress: 1, message: 'step "row" succeeded' },
        { progress: 2, message: 'step "append" succeeded' },
      ]);
    } finally {
      await client.close();
    }
  });

  it('without credentials /mcp is 401 with WWW-Authenticate, and the SDK client cannot connect', async () => {
    const response = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="stepwire"');
    await expect(connect(undefined)).rejects.toThrow(/401|Unauthorized/i);
    const bad = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sw_not_a_key' },
      body: '{}',
    });
    expect(bad.status).toBe(401);
  });

  it('refuses a cross-site browser request (a page elsewhere riding a signed-in browser): nothing runs', async () => {
    const before = await runCount();
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'open_customer', arguments: { id: 1 } },
    };
    for (const headers of [
      { 'sec-fetch-site': 'cross-site', cookie: 'stepwire_session=stolen' },
      { origin: 'http://evil.example', cookie: 'stepwire_session=stolen' },
      // A bearer key with a cookie is the browser's too.
      { 'sec-fetch-site': 'same-site', cookie: 'stepwire_session=x', authorization: `Bearer ${admin}` },
    ]) {
      const response = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(call),
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'cross_site' });
    }
    expect(await runCount()).toBe(before);
  });

  it('GET and DELETE /mcp are 405 (a stateless server: no event stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${server.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${admin}`, accept: 'text/event-stream' },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
  });
});
