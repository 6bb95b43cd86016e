import { stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { StepwireError, ValidationError } from '../errors/index.js';
import { nearest } from './nearest.js';

/** Where a command writes: standard output for results, standard error for progress and problems. @internal */
export interface CliIo {
  /** Writes a line to standard output. */
  out(line: string): void;
  /** Writes a line to standard error. */
  err(line: string): void;
  /** Resolves when the process is asked to stop (Ctrl-C, SIGTERM); used by `serve`. */
  stopped(): Promise<void>;
}

/** Exit codes: 0 ok, 1 failure, 2 usage error. @internal */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** The command line was wrong: printed with a hint to `--help`, exit code 2. @internal */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The command whose help to point at. */
    readonly command?: string,
  ) {
    super(message);
  }
}

/** The process's own streams and signals. @internal */
export function processIo(): CliIo {
  return {
    out: (line) => void process.stdout.write(`${line}\n`),
    err: (line) => void process.stderr.write(`${line}\n`),
    stopped: () =>
      new Promise((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }),
  };
}

/** Options of a command, as `node:util` `parseArgs` takes them. @internal */
export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses a command's arguments strictly; unknown options and missing values are usage errors.
 * `--help`/`-h` is accepted by every command.
 * @internal
 */
export function parseCommand(
  command: string,
  args: string[],
  options: OptionSpec,
  positionals: { min: number; max: number },
) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    let message =
      error instanceof Error ? error.message.replace(/\. To specify a positional.*$/s, '.') : String(error);
    const unknown = /^Unknown option '--([^']+)'/.exec(message);
    const near = unknown && nearest(unknown[1]!, [...Object.keys(options), 'help']);
    if (near) message = message.replace(/\.?$/, `; did you mean --${near}?`);
    throw new UsageError(message, command);
  }
  const help = parsed.values['help'] === true;
  if (!help && parsed.positionals.length < positionals.min)
    throw new UsageError(`missing arguments`, command);
  if (!help && parsed.positionals.length > positionals.max)
    throw new UsageError(`unexpected argument "${parsed.positionals[positionals.max]}"`, command);
  return {
    values: parsed.values as Record<string, string | boolean | undefined>,
    positionals: parsed.positionals,
    help,
  };
}

/**
 * Throws unless `dir` is a folder, with the issue `loadProject` reports; for commands that open a
 * database in the project before loading it, so a mistyped folder creates nothing.
 * @internal
 */
export async function requireFolder(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory())
    throw new ValidationError([{ code: 'not_found', path: dir, message: `${dir} is not a folder` }]);
}

/**
 * Writes `text` into the `--out` file `file`; a file that cannot be written fails with one line
 * naming it and why.
 * @internal
 */
export async function writeOutput(file: string, text: string): Promise<void> {
  try {
    await writeFile(file, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? `its folder ${dirname(file)} does not exist`
        : code === 'EISDIR'
          ? 'it is a folder'
          : code === 'ENOTDIR'
            ? `${dirname(file)} is not a folder`
            : code === 'EACCES' || code === 'EPERM'
              ? 'permission denied'
              : (error as Error).message;
    throw new StepwireError('cannot_write', `cannot write --out ${file}: ${why}`, { cause: error });
  }
}
