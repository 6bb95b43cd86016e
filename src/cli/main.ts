#!/usr/bin/env node
/**
 * The `stepwire` command's entry: runs {@link runCli} on the process arguments and sets the exit code.
 * @module
 */
import { runCli } from './cli.js';

void runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `stepwire: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
