/**
 * The Model Context Protocol over Streamable HTTP, on web-standard `Request` and `Response`: what
 * `createHandler` answers at `/mcp`, once it has found who is asking.
 * @module
 */
import type { Engine } from '../engine/engine.js';
import { loadHttpTransport } from './sdk.js';
import { createMcpServer } from './server.js';
import type { McpOptions } from './tools.js';

/**
 * Answers one MCP request (a JSON-RPC message or batch, already read) for `options.principal`.
 * Stateless: a server and transport per request, so any process behind a load balancer answers
 * any request. The answer is JSON, or an event stream when a tool call asks for progress (a
 * `progressToken`), which then carries the progress notifications before the result.
 * @throws StepwireError `missing_dependency` when `@modelcontextprotocol/sdk` is not installed.
 * @internal
 */
export async function answerMcp(
  engine: Engine,
  request: Request,
  body: unknown,
  options: McpOptions,
): Promise<Response> {
  const Transport = await loadHttpTransport('/mcp');
  const server = await createMcpServer(engine, options);
  const stream = asksProgress(body);
  // Without a session id generator: stateless.
  const transport = new Transport({ enableJsonResponse: !stream });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    // A JSON answer is whole here; an event stream ends once its result is sent.
    if (!stream) await server.close();
  }
}

/** Whether a message (or one of a batch) asks for progress notifications. */
function asksProgress(body: unknown): boolean {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.some((message) => {
    const params = (message as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params;
    return params?._meta?.progressToken !== undefined;
  });
}
