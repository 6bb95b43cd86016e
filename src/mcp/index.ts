/**
 * `stepwire/mcp`: workflows as tools for agents, a Model Context Protocol server on the official
 * TypeScript SDK (`@modelcontextprotocol/sdk`, an optional peer dependency: `npm install
 * @modelcontextprotocol/sdk`). Each workflow the principal may run is a tool whose input schema is
 * the workflow's `workflow_input.input_schema` and whose result is the run's output; `read_entity`
 * reads entity rows as `get_entity` does; entity definitions are resources. Every call goes through
 * `engine.as(principal)`. The HTTP API of `createHandler` serves it at `/mcp` (Streamable HTTP),
 * `stepwire mcp <dir>` over standard input and output; {@link createMcpServer} connects to any
 * transport of the SDK.
 * @module
 */
export { createMcpServer, type McpServer } from './server.js';
export { DEFAULT_CALL_TIMEOUT_MS, type McpOptions } from './tools.js';
