import { openDatabase } from './database.js';
import { loadProject } from '../node/project.js';
import { nodeResolver } from '../adapters/node/dns-resolver.js';
import { envSecrets } from '../node/env-secrets.js';
import { HELP } from './help.js';
import { openSandbox } from './sandbox.js';
import { EXIT, parseCommand, requireFolder, type CliIo } from './io.js';
import { printWarnings } from './report.js';
import { parseConcurrency, parsePublicUrl } from './serve.js';
import { FILES_PATH, commandFiles, parseFilesDir } from './files.js';
import { readProjectSettings } from '../node/project-settings.js';

/**
 * `stepwire worker <dir> [--db URL|DIR] [--concurrency N] [--public-url URL] [--files DIR]`: executes
 * the steps of durable runs queued in the database (by `stepwire serve --no-work`, other workers, or
 * an embedding app) and ticks the project's triggers. Entity rows live in the files of `sheets/`;
 * files that `upload_file` steps store with provider `memory` in the database (or the folder
 * `--files`), where `serve` serves them: their links start with the public URL `serve` has
 * (`--public-url`, else `stepwire.json`'s `publicUrl`), else they are the path `/files/<name>`. Stops gracefully on SIGINT or
 * SIGTERM: no further step starts, the steps in flight finish and commit, then the database closes.
 * @internal
 */
export async function workerCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand(
    'worker',
    args,
    {
      db: { type: 'string' },
      schema: { type: 'string' },
      sandbox: { type: 'string' },
      concurrency: { type: 'string', short: 'c' },
      'no-triggers': { type: 'boolean' },
      'public-url': { type: 'string' },
      files: { type: 'string' },
    },
    { min: 1, max: 1 },
  );
  if (help) return (io.out(HELP['worker']!), EXIT.ok);
  const dir = positionals[0]!;
  const concurrency = parseConcurrency(values['concurrency'], 'worker');
  const publicUrlOption = parsePublicUrl(values['public-url'], 'worker');
  const filesDir = await parseFilesDir(values['files'], 'worker');
  await requireFolder(dir);
  // The option wins over stepwire.json's publicUrl; without either, links are paths on the server.
  const settings = await readProjectSettings(dir);
  const publicUrl = publicUrlOption ?? settings.publicUrl;
  const sandbox = openSandbox(values['sandbox'], 'worker');
  const database = await openDatabase(
    dir,
    values['db'] as string | undefined,
    'project',
    values['schema'] as string | undefined,
  );
  try {
    const files = commandFiles(database, {
      dir: filesDir,
      baseUrl: `${publicUrl ?? ''}${FILES_PATH}`,
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
      sheets: 'files',
      ...(files.store ? { fileStore: files.store } : {}),
    });
    printWarnings(io, project.problems);
    const worker = project.engine.work({
      concurrency,
      triggers: values['no-triggers'] !== true,
      onError: (error) => io.err(`worker error: ${error instanceof Error ? error.message : String(error)}`),
    });
    io.out(`stepwire worker on ${database.where}: executing steps of ${dir}, at most ${concurrency} at once`);
    io.out(
      `  files: kept in ${files.where}, linked as ${publicUrl ?? ''}${FILES_PATH}<name>${publicUrl === undefined ? ' (a path on the server: give --public-url, the one serve has, for full links)' : ''}`,
    );
    await io.stopped();
    io.out('stopping: letting the steps in flight finish');
    await worker.stop();
    return EXIT.ok;
  } finally {
    await sandbox.close();
    await database.close();
  }
}
