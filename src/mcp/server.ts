/**
 * The Model Context Protocol server of an engine, on the official SDK's low-level `Server`: the
 * tools, resources and answers of {@link McpSession} behind the protocol's requests.
 * @module
 */
import type { Engine } from '../engine/engine.js';
import { loadSdk } from './sdk.js';
import { McpSession, UnknownName, resolveMcpOptions, type McpOptions } from './tools.js';

/** What the server tells a client about itself when it connects. */
const INSTRUCTIONS =
  'stepwire workflows as tools. Each workflow tool runs the workflow with the arguments as its input and ' +
  'answers with its output; a failed run is an error result naming the step. A run still going when the ' +
  'call answers (or waiting for a person) is answered with its run id and status: read it later with get_run. ' +
  'read_entity reads entity rows; the resources are the entity definitions (columns and keys).';

/** The JSON-RPC code of "resource not found" in the protocol. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * An MCP server as the SDK's transports use it: connect it to one (`StdioServerTransport`, a
 * Streamable HTTP transport), close it when done.
 */
export interface McpServer {
  /** Starts serving over `transport` (an SDK `Transport`). */
  connect(transport: unknown): Promise<void>;
  /** Closes the server and its transport. */
  close(): Promise<void>;
}

/**
 * A Model Context Protocol server for `engine`, as `options.principal` may use it: a tool per
 * workflow it may run, `read_entity`, `get_run`, and the entity definitions it may see as
 * resources. Needs the optional package `@modelcontextprotocol/sdk`.
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * const server = await createMcpServer(engine, { principal: { id: 'agent', kind: 'key', roles: ['sales'] } });
 * await server.connect(new StdioServerTransport());
 * ```
 * @throws StepwireError `missing_dependency` when the SDK is not installed; a `TypeError` naming a
 *   wrong option.
 */
export async function createMcpServer(engine: Engine, options: McpOptions = {}): Promise<McpServer> {
  const resolved = resolveMcpOptions(options);
  const { Server, types } = await loadSdk('stepwire/mcp');
  const session = new McpSession(engine, resolved);
  const server = new Server(
    { name: 'stepwire', version: '1' },
    { capabilities: { tools: { listChanged: false }, resources: {} }, instructions: INSTRUCTIONS },
  );
  const protocolError = (error: unknown): never => {
    if (error instanceof UnknownName)
      throw new types.McpError(
        error.kind === 'tool' ? types.ErrorCode.InvalidParams : RESOURCE_NOT_FOUND,
        error.message,
      );
    throw error;
  };
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: await session.tools() }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (progress: number, message: string) =>
            extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress, message },
            });
    return session
      .call(request.params.name, request.params.arguments, {
        signal: extra.signal,
        ...(progress ? { progress } : {}),
      })
      .catch(protocolError);
  });
  server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({
    resources: await session.resources(),
  }));
  server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => ({
    contents: [await session.readResource(request.params.uri).catch(protocolError)],
  }));
  return server as unknown as McpServer;
}
