import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { afterAll, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { Engine } from '../../src/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const KILLS = 50;
/** Most time a child runs workflows (after its first run) before it is killed. */
const MOST_RUNNING_MS = 300;
/** Most time a child opens the directory before it is killed, when it dies opening. */
const MOST_OPENING_MS = 1000;
const temp = mkdtempSync(join(tmpdir(), 'stepwire-pg-crash-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/**
 * The child, bundled from the source once with esbuild, packages included but those that load files
 * beside them (PGlite, QuickJS) and pg: each of the 50 processes then starts in a fraction of what
 * loading the source through tsx takes. It lives under the repository's .tmp/ so the packages left
 * out resolve from node_modules.
 */
async function bundleChild(): Promise<string> {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true });
  const outfile = join(ROOT, '.tmp', `crash-child-${process.pid}.mjs`);
  await build({
    entryPoints: [join(ROOT, 'test/postgres/crash-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    external: ['@electric-sql/pglite', 'quickjs-emscripten', '@jitl/*', 'pg', 'pg-boss'],
    // CommonJS packages in the bundle call require().
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'error',
  });
  return outfile;
}

/** A started child: its lines as they come, and its end. */
interface Child {
  child: ChildProcess;
  lines: string[];
  line(test: (line: string) => boolean): Promise<string>;
  closed: Promise<number | null>;
  stderr(): string;
}

function start(script: string, dir: string): Child {
  const child = spawn(process.execPath, [script, dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Node 22+ caches the compiled bundle between the children (older versions ignore it).
    env: { ...process.env, NODE_COMPILE_CACHE: join(temp, 'compile-cache') },
  });
  const lines: string[] = [];
  let stderr = '';
  let wake: (() => void) | undefined;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    wake?.();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const closed = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  void closed.then(() => wake?.());
  /** Resolves with the first line `test` accepts; rejects when the child ends first. */
  const line = async (test: (line: string) => boolean): Promise<string> => {
    for (let seen = 0; ;) {
      for (; seen < lines.length; seen++) if (test(lines[seen]!)) return lines[seen]!;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`the child ended (${child.exitCode ?? child.signalCode}) before the line\n${stderr}`);
      await new Promise<void>((done) => (wake = done));
    }
  };
  return { child, lines, line, closed, stderr: () => stderr };
}

it(`kill -9 at ${KILLS} random moments: every run written is there after each reopen`, async () => {
  const script = await bundleChild();
  const dir = join(temp, 'db');
  const written = new Set<string>();
  const collect = (run: Child) => {
    for (const line of run.lines) if (line.startsWith('done ')) written.add(line.slice(5));
  };
  let next = start(script, dir);
  try {
    for (let kill = 0; kill < KILLS; kill++) {
      const run = next;
      // Every fifth child dies while it opens the directory (lock, recovery, migrations): the
      // previous one was just killed. The first one, which creates the database, always gets to run.
      if (kill % 5 === 4) {
        await new Promise((done) => setTimeout(done, Math.random() * MOST_OPENING_MS));
        run.child.kill('SIGKILL');
        expect(await run.closed, run.stderr()).toBeNull();
        collect(run);
        next = start(script, dir);
        continue;
      }
      const have = new Set(JSON.parse((await run.line((l) => l.startsWith('have '))).slice(5)) as string[]);
      expect([...written].filter((id) => !have.has(id))).toEqual([]);
      await run.line((l) => l.startsWith('done '));
      // The next child loads meanwhile, then waits for the lock this one holds.
      next = start(script, dir);
      if (kill === 0) {
        // A second process opening the directory meanwhile is refused, naming the holder.
        const refused = await openPostgres(dir).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refused).toMatchObject({ name: 'StorageError', code: 'locked', pid: run.child.pid });
        expect((refused as Error).message).toContain(`process ${run.child.pid}`);
      }
      await new Promise((done) => setTimeout(done, Math.random() * MOST_RUNNING_MS));
      run.child.kill('SIGKILL');
      expect(await run.closed, run.stderr()).toBeNull();
      collect(run);
    }
    next.child.kill('SIGKILL');
    await next.closed;
    // Each child killed while running wrote one run at least.
    expect(written.size).toBeGreaterThanOrEqual((KILLS * 4) / 5);

    const db = await openPostgres(dir);
    try {
      const stored = new Set((await db.storage.list('runs')).map((entry) => entry.key));
      expect([...written].filter((id) => !stored.has(id))).toEqual([]);
      const engine = new Engine({ storage: db.storage });
      await engine.ready();
      const runs = (await db.storage.list<{ status: string }>('runs')).map((entry) => entry.value.status);
      expect(runs.filter((status) => status !== 'succeeded' && status !== 'interrupted')).toEqual([]);
      expect(runs.filter((status) => status === 'interrupted').length).toBeGreaterThan(0);
      for (const id of written) expect((await engine.getRun(id)).status).toBe('succeeded');
    } finally {
      await db.close();
    }
  } finally {
    next.child.kill('SIGKILL');
    rmSync(script, { force: true });
  }
}, 170_000);
