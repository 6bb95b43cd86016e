// Runs a dev tool's bin (vitest, tsx) on Node 22.12 or later, whatever Node started npm.
//
//   node scripts/with-node.mjs <bin> [args...]             the running Node if it is 22.12+, else
//                                                          node_modules/node22 (the devDependency)
//   node scripts/with-node.mjs --node=24 <bin> [args...]   node_modules/node24, or the running Node if
//                                                          its major is 24
//
// node_modules/node22 and node24 hold Linux x64 binaries. Elsewhere (macOS, Windows, Arm) the running
// Node is used with a warning when it is older than 22.12. The chosen Node's folder goes first on PATH,
// so processes the tool starts with `node` run on it too.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MINIMUM = [22, 12];

const args = process.argv.slice(2);
const wanted = args[0]?.startsWith('--node=') ? Number(args.shift().slice('--node='.length)) : undefined;
const [bin, ...rest] = args;
if (bin === undefined) fail('usage: node scripts/with-node.mjs [--node=<major>] <bin> [args...]');

const node = chooseNode();
const child = spawn(node, [binScript(bin), ...rest], {
  stdio: 'inherit',
  env: { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});

/** The Node binary to run the tool on; see the header. */
function chooseNode() {
  const running = process.versions.node.split('.').map(Number);
  const bundled = (major) => {
    const path = join(ROOT, 'node_modules', `node${major}`, 'bin', 'node');
    return process.platform === 'linux' && process.arch === 'x64' && existsSync(path) ? path : undefined;
  };
  if (wanted !== undefined) {
    const path = bundled(wanted) ?? (running[0] === wanted ? process.execPath : undefined);
    if (path === undefined)
      fail(
        `with-node: Node ${wanted} is needed: node_modules/node${wanted} is not there (Linux x64 only) and this is ${process.version}`,
      );
    return announce(path, `Node ${wanted} asked for`);
  }
  if (running[0] > MINIMUM[0] || (running[0] === MINIMUM[0] && running[1] >= MINIMUM[1]))
    return announce(process.execPath, 'the running Node');
  const path = bundled(MINIMUM[0]);
  if (path !== undefined) return announce(path, `${process.version} is older than 22.12`);
  console.warn(
    `with-node: ${process.version} is older than 22.12, which stepwire needs, and node_modules/node22 ` +
      `(Linux x64 only) is not usable here: running on ${process.version} anyway. Install Node 22.12 or later.`,
  );
  return process.execPath;
}

/** Prints which Node runs the tool, for logs. */
function announce(path, why) {
  const version = path === process.execPath ? process.version : readVersion(path);
  const where = path.startsWith(ROOT) ? relative(ROOT, path) : path;
  console.error(`with-node: ${bin} on Node ${version} (${where}: ${why})`);
  return path;
}

/** The version a bundled binary reports, read from its package.json so nothing has to start. */
function readVersion(path) {
  const pkg = JSON.parse(readFileSync(join(dirname(path), '..', 'package.json'), 'utf8'));
  return `v${pkg.version}`;
}

/** The JavaScript file behind a package's bin of the same name, e.g. vitest -> vitest/vitest.mjs. */
function binScript(name) {
  const folder = join(ROOT, 'node_modules', name);
  const pkg = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  const script = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.[name];
  if (script === undefined) fail(`with-node: ${name} has no bin named ${name}`);
  return join(folder, script);
}

function fail(message) {
  console.error(message);
  process.exit(1);
}
