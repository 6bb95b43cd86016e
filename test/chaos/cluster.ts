/**
 * A throwaway PostgreSQL cluster for the database restart test: `initdb` into a temporary directory,
 * a server on a free port of 127.0.0.1 (its socket in the same directory), `pg_ctl restart -m
 * immediate` on demand, and everything removed at the end. Run as root, the tools run as the
 * `postgres` user (initdb refuses root), which then owns the directory.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the tools are looked for before the PATH: /usr/local/bin, then Debian's and Ubuntu's, newest first. */
const TOOL_DIRS = [
  '/usr/local/bin',
  ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [])
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => `/usr/lib/postgresql/${version}/bin`),
];

/** A running throwaway cluster. */
export interface Cluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** Restarts the server with `pg_ctl restart -m immediate` (a crash and recovery), waiting until it accepts connections. */
  restart(): void;
  /** Stops the server at once and removes its directory. */
  destroy(): void;
}

/** The paths of `initdb` and `pg_ctl`, or why they are not there. */
export function findTools(): { initdb: string; pgCtl: string } | string {
  const find = (name: string) => {
    for (const dir of TOOL_DIRS) if (existsSync(join(dir, name))) return join(dir, name);
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    return found.status === 0 ? found.stdout.trim() : undefined;
  };
  const initdb = find('initdb');
  const pgCtl = find('pg_ctl');
  if (initdb === undefined || pgCtl === undefined)
    return `${initdb === undefined ? 'initdb' : 'pg_ctl'} is not installed (looked in ${TOOL_DIRS.join(', ')} and on the PATH)`;
  return { initdb, pgCtl };
}

/** Creates and starts a cluster. */
export async function startCluster(tools: { initdb: string; pgCtl: string }): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'stepwire-chaos-cluster-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const root = process.getuid?.() === 0;
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  const run = (tool: string, args: string[]) => {
    const [command, all] = root ? ['runuser', ['-u', 'postgres', '--', tool, ...args]] : [tool, args];
    const result = spawnSync(command, all, { encoding: 'utf8', cwd: dir, timeout: 60_000 });
    if (result.status !== 0) {
      const serverLog = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '';
      throw new Error(
        `${tool} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.error ?? ''}\n${serverLog}`,
      );
    }
  };
  const port = await freePort();
  run(tools.initdb, ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  // fsync is off: the operating system stays up, only the server crashes.
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c max_connections=100`;
  run(tools.pgCtl, ['-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: () => run(tools.pgCtl, ['-D', data, '-l', log, '-w', '-t', '60', '-m', 'immediate', 'restart']),
    destroy() {
      try {
        run(tools.pgCtl, ['-D', data, '-m', 'immediate', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A TCP port of 127.0.0.1 that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
