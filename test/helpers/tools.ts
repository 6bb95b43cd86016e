// Finds the command-line tools some tests drive (poppler, Chromium, Bun, Deno). Outside CI a missing
// tool prints a notice and its tests skip; under CI (the `CI` variable set) it throws, so a CI machine
// without the tool fails instead of passing with fewer tests.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A program some tests run. */
export interface Tool {
  /** The executable's name, looked up on `PATH`. */
  name: string;
  /** What installs it, named in the notice and the error: `apt-get install -y poppler-utils`. */
  install: string;
  /** Paths tried before `PATH`, e.g. the binary an npm package puts in `node_modules`. */
  candidates?: string[];
}

/** `pdftotext`, `pdfinfo` and `pdftoppm` come together in Debian's poppler-utils. */
export const POPPLER: Tool = { name: 'pdftotext', install: 'apt-get install -y poppler-utils' };
/** Chromium, which the browser end-to-end test drives through playwright-core. */
export const CHROMIUM: Tool = { name: 'chromium', install: 'apt-get install -y chromium' };
/** The arch in the names of Bun's and Deno's per-platform npm packages. */
const ARCH = process.arch === 'arm64' ? { bun: 'aarch64', deno: 'arm64' } : { bun: 'x64', deno: 'x64' };
/**
 * Bun 1, from the `bun` devDependency. Its per-platform package comes first: without install scripts
 * (`npm ci --ignore-scripts`) node_modules/.bin/bun is only a placeholder that refuses to run.
 */
export const BUN: Tool = {
  name: 'bun',
  install: 'npm ci (the devDependency bun)',
  candidates: [
    modulePath(`@oven/bun-${process.platform}-${ARCH.bun}/bin/bun`),
    modulePath(`@oven/bun-${process.platform}-${ARCH.bun}-musl/bin/bun`),
    modulePath('.bin/bun'),
  ],
};
/** Deno 2, from the `deno` devDependency: its per-platform binary, else the package's launcher. */
export const DENO: Tool = {
  name: 'deno',
  install: 'npm ci (the devDependency deno)',
  candidates: [
    modulePath(`@deno/${process.platform}-${ARCH.deno}-glibc/deno`),
    modulePath(`@deno/${process.platform}-${ARCH.deno}/deno`),
    modulePath('.bin/deno'),
  ],
};

/** Whether this run is CI (the `CI` variable set, and not to `false` or `0`), where every test must run. */
export function inCi(): boolean {
  return !['', '0', 'false'].includes((process.env['CI'] ?? '').toLowerCase());
}

const found = new Map<string, string | undefined>();

/**
 * The full path of `tool`, or `undefined` after a notice on stderr (the caller then skips its tests).
 * Under CI a missing tool throws, naming it and what installs it.
 */
export function findTool(tool: Tool): string | undefined {
  if (!found.has(tool.name)) {
    const path = [...(tool.candidates ?? []), ...onPath(tool.name)].find(isExecutable);
    if (path === undefined) {
      const missing = `${tool.name} is not installed (${tool.install})`;
      if (inCi()) throw new Error(`${missing}: CI runs every test, so this one fails instead of skipping`);
      console.warn(`${missing}: skipping the tests and checks that need it`);
    }
    found.set(tool.name, path);
  }
  return found.get(tool.name);
}

/**
 * `tool --version`'s first line, or `undefined` when the tool is missing (see {@link findTool}).
 * A tool that is there but does not answer throws, in and out of CI.
 */
export function toolVersion(tool: Tool): { path: string; version: string } | undefined {
  const path = findTool(tool);
  if (path === undefined) return undefined;
  const result = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0)
    throw new Error(`${path} --version failed (${result.status ?? result.signal}): ${result.stderr}`);
  return { path, version: result.stdout.split('\n')[0]!.trim() };
}

function modulePath(path: string): string {
  return fileURLToPath(new URL(`../../node_modules/${path}`, import.meta.url));
}

function onPath(name: string): string[] {
  return (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, name));
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
