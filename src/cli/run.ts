import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { loadProject } from '../node/project.js';
import { openDatabase } from './database.js';
import { nodeResolver } from '../adapters/node/dns-resolver.js';
import { envSecrets } from '../node/env-secrets.js';
import type { RunEvent } from '../engine/record.js';
import { HELP } from './help.js';
import { openSandbox } from './sandbox.js';
import { EXIT, UsageError, parseCommand, requireFolder, type CliIo } from './io.js';
import { formatJson, formatMs, printIssues, printWarnings } from './report.js';
import { runTimelineText } from '../pictures/index.js';
import { printable } from '../pictures/text-timeline.js';
import { NotFoundError, ValidationError } from '../errors/index.js';
import { FILES_PATH, commandFiles, parseFilesDir } from './files.js';
import { parsePublicUrl } from './serve.js';
import { readProjectSettings } from '../node/project-settings.js';

/**
 * `stepwire run <dir> <workflow> [--input JSON] [--out DIR] [--db URL|DIR] [--schema NAME] [--files DIR]
 * [--public-url URL]`: a line per step as it finishes, then the output as JSON on standard output;
 * exit 0 succeeded, 1 failed. With `--db` the run is a real one: its record is kept in that database,
 * its writes land in the files of `sheets/` and the files it stores in the database's file store, as
 * `serve` and `worker` keep them. Without it, it is a dry run: entity rows are copies in memory and
 * no sheet file changes (the output says so). `--files` keeps stored files in that folder instead;
 * every stored file is also written to `--out`.
 * @internal
 */
export async function runCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals, help } = parseCommand(
    'run',
    args,
    {
      input: { type: 'string', short: 'i' },
      out: { type: 'string', short: 'o' },
      db: { type: 'string' },
      schema: { type: 'string' },
      sandbox: { type: 'string' },
      files: { type: 'string' },
      'public-url': { type: 'string' },
    },
    { min: 2, max: 2 },
  );
  if (help) return (io.out(HELP['run']!), EXIT.ok);
  const [dir, workflow] = positionals as [string, string];
  const input = await readInput(values['input'] as string | undefined);
  const outDir = (values['out'] as string | undefined) ?? 'out';
  const publicUrlOption = parsePublicUrl(values['public-url'], 'run');
  const filesDir = await parseFilesDir(values['files'], 'run');
  await requireFolder(dir);
  const schema = values['schema'] as string | undefined;
  if (schema !== undefined && values['db'] === undefined)
    throw new UsageError('--schema names a schema of the database --db gives; give --db too', 'run');
  const sandbox = openSandbox(values['sandbox'], 'run');
  const database = await openDatabase(dir, values['db'] as string | undefined, 'memory', schema);
  // A run recorded in a database that `serve` shares is a real run: it writes the sheet files too.
  const real = database.storage !== undefined;
  try {
    const settings = await readProjectSettings(dir);
    const publicUrl = publicUrlOption ?? settings.publicUrl;
    const files = commandFiles(database, {
      dir: filesDir,
      baseUrl: `${publicUrl ?? ''}${FILES_PATH}`,
      maxBytes: settings.limits?.uploadMaxBytes,
    });
    const written: string[] = [];
    const project = await loadProject(dir, {
      engineOptions: {
        sandbox,
        security: { resolve: nodeResolver },
        secrets: envSecrets(),
        ...(database.storage ? { storage: database.storage } : {}),
      },
      sheets: real ? 'files' : 'memory',
      ...(files.store ? { fileStore: files.store } : {}),
      outDir,
      onFileWritten: (path) => written.push(path),
    });
    printWarnings(io, project.problems);
    if (!real)
      io.err(
        `dry run: entity rows are copies in memory, so no file in ${join(dir, 'sheets')} changes (give --db to write them)`,
      );
    let handle;
    try {
      handle = await project.engine.start(workflow, input);
    } catch (error) {
      if (error instanceof NotFoundError) {
        const names = (await project.engine.workflows.list()).map((w) => w.name);
        io.err(`✗ there is no workflow "${workflow}" in ${dir} (workflows: ${names.join(', ') || 'none'})`);
        return EXIT.failure;
      }
      if (!(error instanceof ValidationError)) throw error;
      printIssues(io, error.issues, `✗ the input of workflow "${workflow}" is invalid:`);
      return EXIT.failure;
    }
    io.err(`▶ ${workflow} (run ${handle.id})`);
    for await (const event of handle.events) {
      const line = progressLine(event);
      if (line !== undefined) io.err(line);
    }
    const record = await handle.result;
    for (const { channel, message } of project.chat.messages) io.err(`  chat #${channel}: ${message}`);
    for (const path of written) io.err(`  wrote ${relative(process.cwd(), path) || path}`);
    io.err(runTimelineText(record));
    if (record.status !== 'succeeded') {
      io.err(`✗ run ${record.status}: ${record.error?.message ?? 'no reason given'}`);
      return EXIT.failure;
    }
    io.out(formatJson(record.output));
    return EXIT.ok;
  } finally {
    await sandbox.close();
    await database.close();
  }
}

/** The line shown for an event, or nothing. */
function progressLine(event: RunEvent): string | undefined {
  const line = progressText(event);
  if (line === undefined) return undefined;
  // A script's log may span lines: the lines after its first are indented under it.
  if (event.type === 'step.log') return line.split('\n').map(printable).join('\n      ');
  return printable(line);
}

function progressText(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'step.succeeded':
      return `  ✓ ${event.step.padEnd(16)} ${formatMs(event.duration_ms)}`;
    case 'step.skipped':
      return `  – ${event.step.padEnd(16)} skipped`;
    case 'step.failed':
      return `  ✗ ${event.step.padEnd(16)} failed: ${event.error.message}`;
    case 'step.retrying':
      return `  ↻ ${event.step.padEnd(16)} retrying in ${formatMs(event.delay_ms)}: ${event.error.message}`;
    case 'step.log':
      return `    ${event.step}${event.item === undefined ? '' : `[${event.item}]`}: ${event.message}`;
    case 'step.waiting':
      return `  ⏸ ${event.step.padEnd(16)} waiting (${event.wait.kind}${event.wait.due_at ? ` until ${event.wait.due_at}` : ''})`;
    case 'item.finished':
      return event.error
        ? `  ✗ ${`${event.step}[${event.item}]`.padEnd(16)} failed: ${event.error.message}`
        : undefined;
    default:
      return undefined;
  }
}

/** `--input` as JSON text, or `@file.json`; absent means `{}`. */
async function readInput(value: string | undefined): Promise<unknown> {
  if (value === undefined) return {};
  let text = value;
  if (value.startsWith('@')) {
    text = await readFile(value.slice(1), 'utf8').catch(() => {
      throw new UsageError(`--input ${value}: cannot read ${value.slice(1)}`, 'run');
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `--input is not valid JSON (${(error as Error).message}); e.g. --input '{"customer_id":1}'`,
      'run',
    );
  }
}
