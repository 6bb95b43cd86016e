import { openDatabase } from './database.js';
import { loadProject } from '../node/project.js';
import { nodeResolver } from '../adapters/node/dns-resolver.js';
import { HELP } from './help.js';
import { openSandbox } from './sandbox.js';
import { EXIT, parseCommand, requireFolder, type CliIo } from './io.js';
import { printWarnings } from './report.js';
import { parseConcurrency } from './serve.js';

/**
 * `stepwire worker <dir> [--db URL|DIR] [--concurrency N]`: executes the steps of durable runs queued
 * in the database (by `stepwire serve --no-work`, other workers, or an embedding app) and ticks the
 * project's triggers. Entity rows live in the files of `sheets/`. Stops gracefully on SIGINT or
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
    },
    { min: 1, max: 1 },
  );
  if (help) return (io.out(HELP['worker']!), EXIT.ok);
  const dir = positionals[0]!;
  const concurrency = parseConcurrency(values['concurrency'], 'worker');
  await requireFolder(dir);
  const sandbox = openSandbox(values['sandbox'], 'worker');
  const database = await openDatabase(
    dir,
    values['db'] as string | undefined,
    'project',
    values['schema'] as string | undefined,
  );
  try {
    const project = await loadProject(dir, {
      engineOptions: {
        sandbox,
        security: { resolve: nodeResolver },
        ...(database.storage ? { storage: database.storage } : {}),
        ...(database.queue ? { queue: database.queue } : {}),
      },
      sheets: 'files',
    });
    printWarnings(io, project.problems);
    const worker = project.engine.work({
      concurrency,
      triggers: values['no-triggers'] !== true,
      onError: (error) => io.err(`worker error: ${error instanceof Error ? error.message : String(error)}`),
    });
    io.out(`stepwire worker on ${database.where}: executing steps of ${dir}, at most ${concurrency} at once`);
    await io.stopped();
    io.out('stopping: letting the steps in flight finish');
    await worker.stop();
    return EXIT.ok;
  } finally {
    await sandbox.close();
    await database.close();
  }
}
