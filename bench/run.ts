/**
 * Runs every benchmark (or those named on the command line) and prints their figures, each in a
 * process of its own, so no benchmark's figures depend on the heap another one left behind.
 * `npm run bench` or `npm run bench -- entity-read workflow-overhead`.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ALL = [
  'entity-read',
  'workflow-overhead',
  'for-each',
  'json-schema',
  'transform',
  'pdf',
  'http',
  'storage',
  'durable',
] as const;

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const names = wanted.length > 0 ? wanted : [...ALL];
for (const name of names) {
  if (!(ALL as readonly string[]).includes(name)) {
    console.error(`unknown benchmark "${name}" (known: ${ALL.join(', ')})`);
    process.exit(2);
  }
}
let failed = 0;
for (const name of names) {
  console.log(`\n=== ${name} ===`);
  // The same Node and loader flags (tsx's) as this process.
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const child = spawnSync(process.execPath, [...process.execArgv, file], { stdio: 'inherit' });
  if (child.status !== 0) {
    console.error(`benchmark "${name}" failed (${child.signal ?? `exit ${child.status}`})`);
    failed++;
  }
}
process.exitCode = failed > 0 ? 1 : 0;
