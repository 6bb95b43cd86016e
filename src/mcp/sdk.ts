/**
 * Loads the official Model Context Protocol SDK (`@modelcontextprotocol/sdk`), an optional peer
 * dependency, on first use.
 * @module
 */
import type * as ServerModule from '@modelcontextprotocol/sdk/server/index.js';
import type * as TypesModule from '@modelcontextprotocol/sdk/types.js';
import type * as HttpModule from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type * as StdioModule from '@modelcontextprotocol/sdk/server/stdio.js';
import { importOptional } from '../adapters/import-optional.js';

/** The package, as in `npm install`. */
const SDK = '@modelcontextprotocol/sdk';

/** The parts of the SDK a server needs. @internal */
export interface McpSdk {
  Server: typeof ServerModule.Server;
  types: typeof TypesModule;
}

let loaded: Promise<McpSdk> | undefined;

/**
 * Imports a module of the SDK. The specifier is built at run time so that a bundler of
 * `stepwire/http` (which mounts `/mcp`) neither needs the package nor packs it in when it is not
 * installed.
 */
function load<T>(path: string, user: string): Promise<T> {
  const specifier = `${SDK}/${path}`;
  return importOptional(SDK, user, () => import(/* @vite-ignore */ specifier) as Promise<T>);
}

/**
 * The SDK's server and message schemas.
 * @throws StepwireError `missing_dependency` naming the package and how to install it.
 * @internal
 */
export function loadSdk(user: string): Promise<McpSdk> {
  loaded ??= Promise.all([
    load<typeof ServerModule>('server/index.js', user),
    load<typeof TypesModule>('types.js', user),
  ]).then(
    ([server, types]) => ({ Server: server.Server, types }),
    (error: unknown) => {
      loaded = undefined;
      throw error;
    },
  );
  return loaded;
}

/** The Streamable HTTP transport on web-standard `Request` and `Response`. @internal */
export async function loadHttpTransport(
  user: string,
): Promise<typeof HttpModule.WebStandardStreamableHTTPServerTransport> {
  const module = await load<typeof HttpModule>('server/webStandardStreamableHttp.js', user);
  return module.WebStandardStreamableHTTPServerTransport;
}

/** The transport over standard input and output. @internal */
export async function loadStdioTransport(user: string): Promise<typeof StdioModule.StdioServerTransport> {
  const module = await load<typeof StdioModule>('server/stdio.js', user);
  return module.StdioServerTransport;
}
