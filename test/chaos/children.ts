/**
 * Worker child processes of the chaos tests: `worker-child.ts` bundled once per test file with
 * esbuild (packages included but those that load files beside them), so a restarted worker works
 * within a second; each spawned child is tracked until it ends, and `killAll` ends those left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '../..');

/** A worker child. */
export interface Worker {
  child: ChildProcess;
  /** Resolves once the child prints `ready`; rejects when it ends first. */
  ready: Promise<void>;
  /** Resolves when the child has ended: its exit code, or the signal that ended it. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Whether the child is still running. */
  alive(): boolean;
  /** Its lines on stdout so far. */
  lines: string[];
  /** What it wrote on stderr so far. */
  stderr(): string;
}

/** Spawns and tracks worker children of one test file. */
export class Workers {
  readonly #script: string;
  readonly #env: Record<string, string>;
  readonly #all = new Set<Worker>();

  private constructor(script: string, env: Record<string, string>) {
    this.#script = script;
    this.#env = env;
  }

  /** Bundles the worker child; `env` is passed to every child spawned. */
  static async bundle(env: Record<string, string>): Promise<Workers> {
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    const outfile = join(ROOT, '.tmp', `chaos-worker-${process.pid}-${Date.now()}.mjs`);
    await build({
      entryPoints: [join(ROOT, 'test/chaos/worker-child.ts')],
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
    return new Workers(outfile, env);
  }

  /** Children still running. */
  get alive(): Worker[] {
    return [...this.#all].filter((worker) => worker.alive());
  }

  /** Spawns a child with the common environment and `env` on top. */
  spawn(env: Record<string, string> = {}): Worker {
    const child = spawn(process.execPath, [this.#script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...this.#env, ...env },
    });
    const lines: string[] = [];
    let stderr = '';
    let ended = false;
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.once('close', (code, signal) => {
        ended = true;
        done({ code, signal });
      }),
    );
    const ready = new Promise<void>((done, fail) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        lines.push(line);
        if (line === 'ready') done();
      });
      void exit.then(({ code, signal }) =>
        fail(new Error(`worker ${child.pid} ended (${code ?? signal}) before it was ready\n${stderr}`)),
      );
    });
    ready.catch(() => undefined);
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const worker: Worker = {
      child,
      ready,
      ended: exit,
      alive: () => !ended && child.exitCode === null && child.signalCode === null,
      lines,
      stderr: () => stderr,
    };
    this.#all.add(worker);
    return worker;
  }

  /**
   * Keeps `count` children running: each one that ends (a crash) is listed in `ended` and replaced,
   * until `stop()`. Resolves once the first `count` are ready.
   */
  async keep(count: number): Promise<{ ended: Worker[]; stop(): void }> {
    const ended: Worker[] = [];
    let stopping = false;
    const watch = (worker: Worker) =>
      void worker.ended.then(() => {
        ended.push(worker);
        if (!stopping) watch(this.spawn());
      });
    const first = Array.from({ length: count }, () => this.spawn());
    first.forEach(watch);
    await Promise.all(first.map((worker) => worker.ready));
    return { ended, stop: () => void (stopping = true) };
  }

  /** Kills a child with SIGKILL and waits until it has ended. */
  async kill(worker: Worker): Promise<void> {
    worker.child.kill('SIGKILL');
    await worker.ended;
  }

  /** Kills every child still running and removes the bundle. */
  async close(): Promise<void> {
    await Promise.all(this.alive.map((worker) => this.kill(worker)));
    rmSync(this.#script, { force: true });
  }
}
