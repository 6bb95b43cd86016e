import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { findTool, POPPLER } from '../helpers/tools.js';

/** The repository root: commands run from there, as `node --import tsx src/cli/main.ts`. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** What a finished `stepwire` process left. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `stepwire <args>` as a user would and waits for it to end (bounded). */
export function stepwire(
  args: string[],
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<Finished> {
  const child = start(args, options.cwd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`stepwire ${args.join(' ')} took longer than ${options.timeoutMs ?? 60_000} ms\n${stderr}`),
      );
    }, options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** A running `stepwire serve`. */
export interface Served {
  url: string;
  stdout: () => string;
  stderr: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop: () => Promise<number | null>;
  /** Kills the process at once (SIGKILL), as a crash would, and resolves when it is gone. */
  kill: () => Promise<void>;
}

/** Starts `stepwire serve <args>` and resolves once it printed its URL. */
export function serveProcess(args: string[], timeoutMs = 60_000): Promise<Served> {
  const child = start(['serve', ...args]);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const closed = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await closed;
    clearTimeout(timer);
    return code;
  };
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`serve did not start in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = /Press Ctrl-C/.test(stdout) && /serving .* at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        const kill = async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await closed;
        };
        resolvePromise({ url: match[1]!, stdout: () => stdout, stderr: () => stderr, stop, kill });
      }
    });
    void closed.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}\n${stdout}\n${stderr}`));
    });
  });
}

function start(args: string[], cwd = ROOT): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A fresh temporary folder and its removal. */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `stepwire-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `pdftotext` of a PDF file, or `undefined` when poppler is not installed (outside CI: the caller
 * skips its check; under CI `findTool` throws).
 */
export function pdfText(file: string): string | undefined {
  if (findTool(POPPLER) === undefined) return undefined;
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8', timeout: 10_000 });
}

/** Runs the command line in this process and collects what it prints: for cases that need no process. */
export async function inProcess(argv: string[]): Promise<Finished> {
  const { runCli } = await import('../../src/cli/cli.js');
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: (l: string) => out.push(l),
    err: (l: string) => err.push(l),
    stopped: () => Promise.resolve(),
  };
  const code = await runCli(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
