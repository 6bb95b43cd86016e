/**
 * Runs every benchmark (or those named on the command line) and prints their figures, each in a
 * process of its own, so no benchmark's figures depend on the heap another one left behind.
 * `npm run bench` or `npm run bench -- entity-read workflow-overhead`. With `--smoke` (as CI runs
 * it), each runs at a tiny size and checks its results, not its timings, all in this process.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { closeSharedPglite } from './util.js';

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
  'access',
  'computed',
  'waits',
  'console',
  'grid-page',
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
if (process.argv.includes('--smoke')) {
  // Tiny sizes, every result checked (CI runs this): all in this process, so the sources and one
  // PGlite database (seconds to make) load once, not once per benchmark.
  process.env['STEPWIRE_BENCH_SMOKE'] = '1';
  for (const name of names) {
    console.log(`\n=== ${name} (smoke) ===`);
    const started = performance.now();
    try {
      const bench = (await import(`./${name}.ts`)) as { run(): Promise<void> };
      await bench.run();
      console.log(`${name}: checks passed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (error) {
      console.error(`benchmark "${name}" failed:`, error);
      failed++;
    }
  }
  await closeSharedPglite();
  // A benchmark that left a handle open (a timer, a socket) must not hold CI.
  process.exit(failed > 0 ? 1 : 0);
}
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
