/**
 * `stepwire mcp <dir>`: the project's workflows as tools for an agent, a Model Context Protocol
 * server over standard input and output.
 * @module
 */
import type { Principal } from '../access/principal.js';
import type { Engine } from '../engine/engine.js';
import { nodeResolver } from '../adapters/node/dns-resolver.js';
import { loadStdioTransport } from '../mcp/sdk.js';
import { createMcpServer } from '../mcp/server.js';
import type { McpOptions } from '../mcp/tools.js';
import { envSecrets } from '../node/env-secrets.js';
import { loadProject } from '../node/project.js';
import { readProjectSettings } from '../node/project-settings.js';
import { openDatabase } from './database.js';
import { FILES_PATH, commandFiles, parseFilesDir } from './files.js';
import { HELP } from './help.js';
import { EXIT, UsageError, parseCommand, requireFolder, type CliIo } from './io.js';
import { printWarnings } from './report.js';
import { openSandbox } from './sandbox.js';
import { parsePublicUrl } from './serve.js';

/** The environment variable holding the API key the server acts as (instead of `--key`). */
const KEY_VARIABLE = 'STEPWIRE_API_KEY';

/**
 * `stepwire mcp <dir>`: the MCP server of the project over standard input and output, as the key
 * `--key` (or `STEPWIRE_API_KEY`) names, else as the project's service principal. Resolves when
 * the client closes standard input or the process is stopped.
 * @internal
 */
export async function mcpCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand(
    'mcp',
    args,
    {
      key: { type: 'string' },
      db: { type: 'string' },
      schema: { type: 'string' },
      memory: { type: 'boolean' },
      timeout: { type: 'string' },
      'public-url': { type: 'string' },
      files: { type: 'string' },
      sandbox: { type: 'string' },
    },
    { min: 1, max: 1 },
  );
  if (help) return (io.out(HELP['mcp']!), EXIT.ok);
  const dir = positionals[0]!;
  const memory = values['memory'] === true;
  if (memory && values['db'] !== undefined)
    throw new UsageError('--memory keeps everything in memory, so it cannot go with --db', 'mcp');
  const timeout = parseTimeout(values['timeout']);
  const key = (values['key'] as string | undefined) ?? process.env[KEY_VARIABLE];
  if (key !== undefined && key.trim() === '')
    throw new UsageError(
      `--key (or ${KEY_VARIABLE}) is empty: give the secret "stepwire keys create" printed`,
      'mcp',
    );
  const publicUrlOption = parsePublicUrl(values['public-url'], 'mcp');
  const filesDir = await parseFilesDir(values['files'], 'mcp');
  await requireFolder(dir);
  const settings = await readProjectSettings(dir);
  const publicUrl = publicUrlOption ?? settings.publicUrl;
  const sandbox = openSandbox(values['sandbox'], 'mcp');
  const database = await openDatabase(
    dir,
    values['db'] as string | undefined,
    memory ? 'memory' : 'project',
    values['schema'] as string | undefined,
  );
  try {
    const files = commandFiles(database, {
      dir: filesDir,
      baseUrl: `${publicUrl ?? ''}${FILES_PATH}`,
      maxBytes: settings.limits?.uploadMaxBytes,
    });
    // Runs go on in this process (no queue): a tool call waits for them, or answers with their id.
    const project = await loadProject(dir, {
      engineOptions: {
        sandbox,
        security: { resolve: nodeResolver },
        secrets: envSecrets(),
        ...(database.storage ? { storage: database.storage } : {}),
      },
      sheets: memory ? 'memory' : 'files',
      ...(files.store ? { fileStore: files.store } : {}),
    });
    printWarnings(io, project.problems);
    let principal: Principal | undefined;
    if (key !== undefined) {
      principal = await project.engine.keys.verify(key);
      if (principal === undefined) {
        io.err(
          `stepwire mcp: the API key is not valid (unknown, revoked or expired) in ${database.where}; make one with "stepwire keys create"`,
        );
        return EXIT.failure;
      }
    }
    const server = await serveMcpStdio(project.engine, {
      ...(principal ? { principal } : {}),
      callTimeoutMs: timeout,
      ...(publicUrl !== undefined ? { runsUrl: publicUrl } : {}),
    });
    io.err(
      `stepwire mcp: serving ${dir} over standard input and output as ${
        principal
          ? `API key "${principal.name ?? principal.id}" (roles: ${principal.roles.join(', ') || 'none'})`
          : 'the project service (every tool)'
      }; data: ${database.where}`,
    );
    await Promise.race([server.closed, io.stopped()]);
    await server.close();
    return EXIT.ok;
  } finally {
    await sandbox.close();
    await database.close();
  }
}

/**
 * Serves `engine` over the process's standard input and output until the client closes its end
 * (or {@link close} is called).
 */
async function serveMcpStdio(
  engine: Engine,
  options: McpOptions,
): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  const Transport = await loadStdioTransport('stepwire mcp');
  const server = await createMcpServer(engine, options);
  const { stdin, stdout } = process;
  const transport = new Transport(stdin, stdout);
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => (ended = resolve));
  transport.onclose = () => ended();
  await server.connect(transport);
  // The transport does not notice the end of its input: the client closing it ends the server.
  stdin.once('end', () => void server.close().then(ended, ended));
  return { closed, close: () => server.close() };
}

/** `--timeout SECONDS` in ms: a number of seconds from 0.001 to 3600 (default 50). */
function parseTimeout(value: unknown): number {
  if (value === undefined) return 50_000;
  const seconds = Number(value);
  const ms = Math.round(seconds * 1000);
  if (value === '' || !Number.isFinite(seconds) || ms < 1 || ms > 3_600_000)
    throw new UsageError(
      `--timeout must be a number of seconds from 0.001 to 3600, got "${String(value)}"`,
      'mcp',
    );
  return ms;
}
