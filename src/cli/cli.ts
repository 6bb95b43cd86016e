/**
 * The `stepwire` command line: `init`, `validate`, `run`, `serve`, `worker`, `types`, `triggers` and
 * `graph` over a project folder.
 * @module
 */
import { formatIssue, formatIssues, isStepwireError, ValidationError } from '../errors/index.js';
import { EXIT, UsageError, processIo, type CliIo } from './io.js';
import { HELP } from './help.js';
import { readVersion } from './version.js';
import { validateCommand } from './validate.js';
import { runCommand } from './run.js';
import { serveCommand } from './serve.js';
import { workerCommand } from './worker.js';
import { typesCommand } from './generate-types.js';
import { triggersCommand } from './triggers.js';
import { graphCommand } from './graph.js';
import { printIssues } from './report.js';
import { nearest } from './nearest.js';
import { initCommand } from './init.js';
import { keysCommand } from './keys.js';
import { usersCommand } from './users.js';
import { initAccessCommand } from './init-access.js';
import { mcpCommand } from './mcp.js';

const COMMANDS: Record<string, (args: string[], io: CliIo) => Promise<number>> = {
  init: initCommand,
  validate: validateCommand,
  run: runCommand,
  serve: serveCommand,
  worker: workerCommand,
  types: typesCommand,
  triggers: triggersCommand,
  graph: graphCommand,
  keys: keysCommand,
  users: usersCommand,
  'init-access': initAccessCommand,
  mcp: mcpCommand,
};

/**
 * Runs the `stepwire` command line with `argv` (without `node` and the script) and resolves with
 * the exit code: 0 ok, 1 failure, 2 usage error.
 * @internal
 */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = first === 'help' && rest[0] !== undefined ? HELP[rest[0]] : undefined;
    io.out(topic ?? HELP['main']!);
    return EXIT.ok;
  }
  if (first === '--version' || first === '-v') {
    io.out(await readVersion());
    return EXIT.ok;
  }
  const command = first === undefined ? undefined : COMMANDS[first];
  if (command === undefined) {
    const near = first === undefined ? undefined : nearest(first, Object.keys(COMMANDS));
    io.err(
      first === undefined
        ? 'stepwire: missing command'
        : `stepwire: unknown command "${first}"${near === undefined ? '' : `; did you mean "${near}"?`}`,
    );
    io.err('');
    io.err(HELP['main']!);
    return EXIT.usage;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`stepwire ${first}: ${error.message}`);
      io.err('');
      io.err(HELP[error.command ?? first!] ?? HELP['main']!);
      return EXIT.usage;
    }
    if (error instanceof ValidationError) {
      const { issues } = error;
      if (issues.length === 1) {
        // One problem, one line; "x is not a folder" already names its path.
        const [issue] = issues as [(typeof issues)[0]];
        io.err(
          `stepwire ${first}: ${issue.message.includes(issue.path) ? issue.message : formatIssue(issue)}`,
        );
      } else if (error.message === formatIssues(issues))
        printIssues(io, issues, `stepwire ${first}: ${issues.length} problems:`);
      else printIssues(io, issues, error.message.split('\n')[0]!);
      return EXIT.failure;
    }
    if (isStepwireError(error)) {
      io.err(`stepwire ${first}: ${error.message}`);
      return EXIT.failure;
    }
    throw error;
  }
}
