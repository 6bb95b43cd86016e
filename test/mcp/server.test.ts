// The MCP server of an engine in one process, through the SDK's client on its in-memory transport:
// long runs (the call's time limit), tool names, input schemas and protocol errors.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, wait, workflow } from '../../src/index.js';
import { createMcpServer, type McpOptions } from '../../src/mcp/index.js';
import { toolNames } from '../../src/mcp/tools.js';
import { textOf } from './helpers.js';

/** A client connected to `createMcpServer(engine, options)`. */
async function connect(engine: Engine, options: McpOptions = {}): Promise<Client> {
  const server = await createMcpServer(engine, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'stepwire-test', version: '1' });
  await client.connect(clientSide);
  return client;
}

/** A workflow of one step of action `test.gate.pass`, with `input_schema` as its input. */
function gated(
  name: string,
  input_schema: Record<string, unknown> = { type: 'object' },
  default_data?: object,
) {
  return {
    name,
    steps: [
      {
        name: 'gate',
        type: 'l2',
        l2_data: { provider: 'test', module: 'gate', action: 'pass', input_data: {} },
      },
    ],
    wires: [],
    workflow_input: { name: 'input', input_schema, ...(default_data ? { default_data } : {}) },
    workflow_output: { name: 'output', output_data: { passed: '{{gate.passed}}' } },
  } as never;
}

/** An engine whose `test.gate.pass` action waits until `open()` is called. */
function gatedEngine() {
  const engine = new Engine();
  let open!: () => void;
  let opened = new Promise<void>((resolve) => (open = resolve));
  engine.actions.register({
    provider: 'test',
    module: 'gate',
    action: 'pass',
    input: z.object({}).passthrough(),
    run: async () => {
      await opened;
      return { passed: true };
    },
  });
  return {
    engine,
    open: () => open(),
    shut: () => {
      opened = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

describe('the MCP server of an engine', () => {
  it('answers a run still going at the time limit with its state and run id, never later; get_run reads it after', async () => {
    const { engine, open } = gatedEngine();
    await engine.workflows.create(gated('slow'));
    const client = await connect(engine, { callTimeoutMs: 300, runsUrl: 'https://flows.example.com/' });
    const started = performance.now();
    const going = await client.callTool({ name: 'slow', arguments: {} });
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3000);
    expect(going.isError ?? false).toBe(false);
    const state = going.structuredContent as Record<string, any>;
    expect(state).toMatchObject({
      workflow: 'slow',
      status: 'running',
      steps: [{ name: 'gate', status: 'running' }],
      continue: {
        http: `GET https://flows.example.com/runs/${state['run_id']}`,
        tool: { name: 'get_run', arguments: { run_id: state['run_id'] } },
      },
    });
    expect(textOf(going)).toBe(
      `The run ${state['run_id']} of workflow "slow" is still running after 0.3 s; it goes on without this call. ` +
        `Read it later with the get_run tool ({"run_id": "${state['run_id']}"}) or GET https://flows.example.com/runs/${state['run_id']}.`,
    );
    // It went on: once the step can end, get_run answers what the call would have.
    expect(
      (await client.callTool({ name: 'get_run', arguments: { run_id: state['run_id'] } })).structuredContent,
    ).toMatchObject({ status: 'running' });
    open();
    await expect.poll(async () => (await engine.getRun(state['run_id'])).status).toBe('succeeded');
    const done = await client.callTool({ name: 'get_run', arguments: { run_id: state['run_id'] } });
    expect(done.structuredContent).toEqual({ passed: true });
    expect(done._meta).toEqual({ 'stepwire/run_id': state['run_id'] });
    await client.close();
  });

  it('answers a run that waits (for an event here) at once with its state, long before the limit', async () => {
    const engine = new Engine();
    await engine.workflows.create(
      workflow('ship')
        .input({ schema: { type: 'object', properties: { order: { type: 'number' } }, required: ['order'] } })
        .step('paid', () =>
          wait({ kind: 'event', event: 'payment.received', match: { order: '{{input.order}}' } }),
        )
        .build(),
    );
    const client = await connect(engine, { callTimeoutMs: 60_000 });
    const started = performance.now();
    const waiting = await client.callTool({ name: 'ship', arguments: { order: 7 } });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(waiting.isError ?? false).toBe(false);
    const state = waiting.structuredContent as Record<string, any>;
    expect(state).toMatchObject({
      workflow: 'ship',
      status: 'waiting',
      steps: [{ name: 'paid', status: 'waiting' }],
    });
    expect(state['steps'][0].wait).toMatchObject({ kind: 'event' });
    expect(textOf(waiting)).toMatch(
      /^The run \S+ of workflow "ship" is waiting \(for a person or an event\); it goes on/,
    );
    await engine.events.send('payment.received', { order: 7 });
    await expect.poll(async () => (await engine.getRun(state['run_id'])).status).toBe('succeeded');
    const done = await client.callTool({ name: 'get_run', arguments: { run_id: state['run_id'] } });
    expect(done.isError ?? false).toBe(false);
    await client.close();
    await engine.close();
  });

  it('without runs.read_own the answer says who can read the run, and offers no get_run', async () => {
    const { engine, open } = gatedEngine();
    await engine.workflows.create(gated('slow'));
    await engine.access.put({ roles: { runner: { grants: ['workflow.run:slow'] } } });
    const client = await connect(engine, {
      callTimeoutMs: 100,
      principal: { id: 'k1', kind: 'key', roles: ['runner'] },
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['slow']);
    const going = await client.callTool({ name: 'slow', arguments: {} });
    expect(textOf(going)).toMatch(/Its record is read with GET \/runs\/\S+ by someone who may read runs\.$/);
    expect((going.structuredContent as any).continue.tool).toBeUndefined();
    open();
    await client.close();
  });

  it('names tools after their workflows, made valid and kept apart from the built-in ones', async () => {
    expect([...toolNames(['read_entity', 'a b', 'a_b', 'ünï', 'get_run', 'plain'])]).toEqual([
      ['a_b', 'a_b'],
      ['plain', 'plain'],
      ['a_b_2', 'a b'],
      ['get_run_2', 'get_run'],
      ['read_entity_2', 'read_entity'],
      ['_n_', 'ünï'],
    ]);
    const { engine, open } = gatedEngine();
    open();
    for (const name of ['a b', 'a_b', 'read_entity']) await engine.workflows.create(gated(name));
    const client = await connect(engine);
    const { tools } = await client.listTools();
    expect(tools.map((t) => [t.name, t.title])).toEqual([
      ['a_b', 'a_b'],
      ['a_b_2', 'a b'],
      ['read_entity_2', 'read_entity'],
      ['read_entity', 'Read entity rows'],
      ['get_run', 'Read a run'],
    ]);
    const called = await client.callTool({ name: 'a_b_2', arguments: {} });
    const run = await engine.getRun((called._meta as Record<string, string>)['stepwire/run_id']!);
    expect(run.workflow).toBe('a b');
    await client.close();
  });

  it('takes the input schema as it is, leaves out of required what default_data fills, wraps an input that is no object', async () => {
    const { engine, open } = gatedEngine();
    open();
    await engine.workflows.create(
      gated(
        'defaults',
        {
          type: 'object',
          properties: { a: { type: 'string' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
        { b: 2 },
      ),
    );
    await engine.workflows.create(gated('listed', { type: 'array', items: { type: 'number' }, minItems: 1 }));
    const client = await connect(engine);
    const tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.inputSchema]));
    expect(tools['defaults']).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      required: ['a'],
    });
    expect(tools['listed']).toEqual({
      type: 'object',
      properties: { input: { type: 'array', items: { type: 'number' }, minItems: 1 } },
      required: ['input'],
      additionalProperties: false,
    });
    const ran = await client.callTool({ name: 'listed', arguments: { input: [1, 2] } });
    expect(ran.structuredContent).toEqual({ passed: true });
    const run = await engine.getRun((ran._meta as Record<string, string>)['stepwire/run_id']!);
    expect(run.input).toEqual([1, 2]);
    const before = (await engine.listRuns()).runs.length;
    const bad = await client.callTool({ name: 'defaults', arguments: { a: 1 } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^Invalid arguments, nothing was run: .*\ba\b/);
    expect((bad.structuredContent as any).error.issues[0].path).toMatch(/a/);
    expect((await engine.listRuns()).runs.length).toBe(before);
    await client.close();
  });

  it('an unknown tool or resource is a protocol error (invalid params, resource not found)', async () => {
    const client = await connect(new Engine());
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool "nope"'),
    });
    await expect(client.readResource({ uri: 'stepwire://entities/nope' })).rejects.toMatchObject({
      code: -32002,
    });
    await expect(client.readResource({ uri: 'https://example.com/x' })).rejects.toMatchObject({
      code: -32002,
    });
    expect((await client.listResources()).resources).toEqual([]);
    await client.close();
  });

  it('refuses options that are wrong, naming them', async () => {
    await expect(createMcpServer(new Engine(), { callTimeoutMs: 0 })).rejects.toThrow(/callTimeoutMs/);
    await expect(createMcpServer(new Engine(), { runsUrl: 7 as never })).rejects.toThrow(/runsUrl/);
  });
});
