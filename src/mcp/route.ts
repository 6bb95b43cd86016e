/**
 * `POST /mcp`: the Model Context Protocol (Streamable HTTP) in the HTTP API's route table, so the
 * handler's checks (Host, same origin, credentials) apply to it as to every route.
 * @module
 */
import { z } from 'zod';
import { SERVICE_PRINCIPAL } from '../access/principal.js';
import { isStepwireError } from '../errors/index.js';
import { problem, problemResponse } from '../http/problem.js';
import { defineRoute } from '../http/route.js';
import { answerMcp } from './http.js';

/** A JSON-RPC 2.0 message, as far as the OpenAPI document describes it. */
const JsonRpcSchema = z
  .object({ jsonrpc: z.literal('2.0') })
  .catchall(z.unknown())
  .describe('A JSON-RPC 2.0 message of the Model Context Protocol.');

/** The route of the MCP server. @internal */
export const MCP_ROUTES = [
  defineRoute({
    method: 'POST',
    path: '/mcp',
    name: 'mcp.post',
    summary: 'Model Context Protocol server (Streamable HTTP)',
    description:
      'Workflows as tools for agents: a tool per workflow the caller may run, `read_entity`, `get_run`, and the ' +
      'entity definitions as resources, each call made as the caller (an API key: `Authorization: Bearer`). ' +
      'Stateless: no session id; GET and DELETE are 405. Send `Accept: application/json, text/event-stream`; the ' +
      'answer is JSON, or `text/event-stream` when a tool call asks for progress (`_meta.progressToken`). ' +
      'Needs the package `@modelcontextprotocol/sdk` on the server (501 without it).',
    body: {
      media: 'json',
      schema: z.union([JsonRpcSchema, z.array(JsonRpcSchema)]),
      required: true,
      description: 'A JSON-RPC message of the Model Context Protocol, or a batch of them.',
    },
    responses: {
      200: {
        description:
          'The JSON-RPC answer (application/json), or an event stream (text/event-stream) of progress notifications and the answer.',
        schema: z.union([JsonRpcSchema, z.array(JsonRpcSchema)]),
      },
      202: { description: 'A notification or answer from the client, taken.' },
      406: {
        description:
          'The request does not accept both application/json and text/event-stream (a JSON-RPC error).',
        schema: JsonRpcSchema,
      },
    },
    problems: [400, 413, 415, 501],
    async action({ host, identity, request, body, options }) {
      const message = await body();
      try {
        return await answerMcp(host, request, message, {
          principal: identity.principal ?? SERVICE_PRINCIPAL,
          runsUrl: `${options.publicOrigin ?? new URL(request.url).origin}${options.basePath}`,
        });
      } catch (error) {
        if (isStepwireError(error) && error.code === 'missing_dependency')
          return problemResponse(problem(501, 'not_implemented', error.message));
        throw error;
      }
    },
  }),
] as const;
