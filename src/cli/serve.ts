import { serve } from '../node/serve.js';
import { openDatabase } from './database.js';
import { describeTrigger } from './triggers.js';
import { loadProject } from '../node/project.js';
import { nodeResolver } from '../adapters/node/dns-resolver.js';
import { envSecrets } from '../node/env-secrets.js';
import { createHandler } from '../http/handler.js';
import { problem, problemResponse } from '../http/problem.js';
import { HELP } from './help.js';
import { openSandbox } from './sandbox.js';
import { EXIT, UsageError, parseCommand, requireFolder, type CliIo } from './io.js';
import { formatMs, printWarnings } from './report.js';
import { publicUrlBase, publicUrlProblem } from '../node/public-url.js';
import { readProjectSettings } from '../node/project-settings.js';
import { FILES_PATH as FILES, commandFiles, parseFilesDir } from './files.js';

/**
 * `stepwire serve <dir> [--port N] [--host ADDR] [--public-url URL] [--db URL|DIR | --memory] [--files DIR]`:
 * the HTTP API and the app screens, a log line per request, the files `upload_file` steps store with
 * provider `memory` served under `/files/` (kept in the database, shared with every worker on it; in
 * the folder `--files` instead; in memory with `--memory`), every link starting with `--public-url`
 * (else the listen address, loopback for a wildcard). Definitions and runs live in `--db`, else in
 * `<dir>/.stepwire/db`; entity rows in the files of `sheets/`. `--memory` keeps everything in memory.
 * Resolves when the process is stopped (SIGINT, SIGTERM), after closing the database.
 * @internal
 */
export async function serveCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand(
    'serve',
    args,
    {
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      'public-url': { type: 'string' },
      out: { type: 'string', short: 'o' },
      db: { type: 'string' },
      schema: { type: 'string' },
      sandbox: { type: 'string' },
      memory: { type: 'boolean' },
      'no-work': { type: 'boolean' },
      concurrency: { type: 'string' },
      files: { type: 'string' },
    },
    { min: 1, max: 1 },
  );
  if (help) return (io.out(HELP['serve']!), EXIT.ok);
  const port = Number(values['port'] ?? 8787);
  if (values['port'] === '' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(
      `--port must be a whole number from 0 to 65535, got "${String(values['port'])}"`,
      'serve',
    );
  const hostname = (values['host'] as string | undefined) ?? '127.0.0.1';
  const publicUrlOption = parsePublicUrl(values['public-url']);
  const dir = positionals[0]!;
  const outDir = values['out'] as string | undefined;
  const memory = values['memory'] === true;
  if (memory && values['db'] !== undefined)
    throw new UsageError('--memory keeps everything in memory, so it cannot go with --db', 'serve');
  const work = values['no-work'] !== true;
  if (!work && memory)
    throw new UsageError(
      '--no-work leaves the steps to workers on a database, so it cannot go with --memory',
      'serve',
    );
  const concurrency = parseConcurrency(values['concurrency'], 'serve');
  const filesDir = await parseFilesDir(values['files'], 'serve');
  await requireFolder(dir);
  // The option wins over stepwire.json's publicUrl.
  const settings = await readProjectSettings(dir);
  const publicUrl = publicUrlOption ?? settings.publicUrl;
  const sandbox = openSandbox(values['sandbox'], 'serve');
  const database = await openDatabase(
    dir,
    values['db'] as string | undefined,
    memory ? 'memory' : 'project',
    values['schema'] as string | undefined,
  );
  // Listen first, so stored files get addresses on this server; requests wait for the project.
  let inner: ((request: Request) => Promise<Response>) | undefined;
  let server;
  try {
    server = await serve(
      (request) =>
        inner
          ? inner(request)
          : Promise.resolve(
              problemResponse(problem(503, 'starting', 'the project is still loading: try again shortly'), {
                'retry-after': '1',
              }),
            ),
      { port, hostname },
    );
  } catch (error) {
    io.err(`stepwire serve: cannot listen on ${hostname}:${port}: ${(error as Error).message}`);
    await database.close();
    return EXIT.failure;
  }
  try {
    // Every link the server hands out (file URLs, app and hook addresses) starts here.
    const base = publicUrl ?? server.url;
    const filesBaseUrl = `${base}${FILES}`;
    const files = commandFiles(database, {
      dir: filesDir,
      baseUrl: filesBaseUrl,
      maxBytes: settings.limits?.uploadMaxBytes,
    });
    const project = await loadProject(dir, {
      engineOptions: {
        sandbox,
        security: { resolve: nodeResolver },
        secrets: envSecrets(),
        ...(database.storage ? { storage: database.storage } : {}),
        ...(database.queue ? { queue: database.queue } : {}),
      },
      sheets: memory ? 'memory' : 'files',
      filesBaseUrl,
      ...(files.store ? { fileStore: files.store } : {}),
      ...(outDir === undefined ? {} : { outDir, onFileWritten: (path: string) => io.err(`wrote ${path}`) }),
    });
    printWarnings(io, project.problems);
    const controlled = await project.engine.accessControlled();
    // An open server beyond loopback lets anyone on the network do anything: refused, as a
    // database server refuses outside clients until authentication is set.
    if (!controlled && !isLoopback(hostname)) {
      io.err(
        `stepwire serve: --host ${hostname} would let anyone who reaches it read and change everything: ${dir} has no access policy. Run "stepwire init-access ${dir} --email you@example.com" first (then sign in), or serve on 127.0.0.1.`,
      );
      return EXIT.failure;
    }
    const api = createHandler(project.engine, {
      onError: (error) =>
        io.err(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
      // Loopback names, the public URL's host and a listen address named on purpose: nothing else
      // (a DNS-rebinding page names its own host).
      allowedHosts: [
        ...(publicUrl !== undefined ? [new URL(publicUrl).host] : []),
        ...(isWildcard(hostname) || isLoopback(hostname) ? [] : [formatHost(hostname)]),
      ],
      ...(publicUrl !== undefined ? { publicUrl } : {}),
    });
    inner = async function stepwireServe(request: Request): Promise<Response> {
      const started = performance.now();
      const url = new URL(request.url);
      const response =
        url.pathname.startsWith(FILES) && (request.method === 'GET' || request.method === 'HEAD')
          ? await files.answer(url.pathname.slice(FILES.length), request, project.files)
          : await api(request);
      io.err(
        `${request.method} ${url.pathname}${url.search} ${response.status} ${formatMs(performance.now() - started)}`,
      );
      return response;
    };
    io.out(`stepwire serving ${dir} at ${server.url}`);
    if (publicUrl !== undefined) io.out(`  public URL: ${publicUrl} (every link starts with it)`);
    io.out(
      controlled
        ? `  access: sign in at ${base}/sign-in; programs send Authorization: Bearer <key> (stepwire keys create)`
        : '  access: none (no access.json): anyone who reaches this loopback address can do anything; stepwire init-access adds sign-in',
    );
    if (isWildcard(hostname) && publicUrl === undefined)
      io.out(
        '  note: listening on every address, answering only loopback names; give --public-url to be reached by name',
      );
    io.out(`  API: ${base}/openapi.json`);
    io.out(`  console: ${base}/console  approvals: ${base}/approvals  MCP: ${base}/mcp`);
    io.out(`  data: ${database.where}${memory ? '' : `; entity rows in ${dir}/sheets`}`);
    for (const name of await project.engine.applications.list()) {
      const app = await project.engine.applications.get(name);
      io.out(
        `  app "${name}": ${base}/applications/${encodeURIComponent(name)}/screens/${app.start_screen_url}`,
      );
    }
    io.out(
      `  files: ${filesBaseUrl}<name> (what upload_file steps store with provider "memory"), kept in ${files.where}`,
    );
    const triggers = await project.engine.triggers.list();
    for (const trigger of triggers) io.out(`  trigger "${trigger.name}": ${describeTrigger(trigger, base)}`);
    const worker = work
      ? project.engine.work({
          concurrency,
          onError: (error) =>
            io.err(`worker error: ${error instanceof Error ? error.message : String(error)}`),
        })
      : undefined;
    io.out(
      work
        ? `  steps: executed here, at most ${concurrency} at once${database.queue ? ' (and by any stepwire worker on the database)' : ''}`
        : '  steps: queued for stepwire worker processes on the database (--no-work)',
    );
    io.out('Press Ctrl-C to stop.');
    await io.stopped();
    await worker?.stop();
    return EXIT.ok;
  } finally {
    await server.close();
    await sandbox.close();
    await database.close();
  }
}

/** Whether a listen address is loopback (127.0.0.0/8, ::1, localhost). */
function isLoopback(hostname: string): boolean {
  return /^(?:localhost|127(?:\.\d{1,3}){3}|::1|\[::1\])$/i.test(hostname);
}

/** Whether a listen address is every interface (0.0.0.0, ::). */
function isWildcard(hostname: string): boolean {
  return hostname === '0.0.0.0' || hostname === '::' || hostname === '[::]';
}

/** A host as a `Host` header names it: an IPv6 address in brackets. */
function formatHost(hostname: string): string {
  return hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
}

/**
 * The `--concurrency` option: steps one process executes at once, 1 to 256 (default 4).
 * @throws {@link UsageError} naming the option.
 * @internal
 */
export function parseConcurrency(value: unknown, command: string): number {
  if (value === undefined) return 4;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new UsageError(
      `--concurrency must be a whole number from 1 to 256, got "${String(value)}"`,
      command,
    );
  return n;
}

/**
 * The `--public-url` option: the http(s) origin, optionally with a path, that clients reach the
 * server at (behind a proxy, or on a listen address such as 0.0.0.0 that no client can use); no
 * query, fragment or credentials. Returned without a trailing slash.
 * @throws {@link UsageError} naming the option, pointing at the help of `command`.
 * @internal
 */
export function parsePublicUrl(value: unknown, command = 'serve'): string | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  const problem = publicUrlProblem(text);
  if (problem !== undefined)
    throw new UsageError(
      `--public-url ${problem}: give the http:// or https:// address clients reach the server at, e.g. https://flows.example.com (got "${text}")`,
      command,
    );
  return publicUrlBase(text);
}
