// The `stepwire` and `stepwire/http` entries the Bun and Deno tests import: the built dist/ when it
// is newer than every file in src/ (CI builds right before it tests). Outside CI a missing or stale
// dist/ is replaced by a bundle of src/ made here with esbuild, split the way tsup splits it, so the
// two entries share one copy of the engine's classes; under CI it fails instead.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { ROOT } from '../cli/helpers.js';
import { inCi } from '../helpers/tools.js';

/** File URLs of the two entries, and where they come from, for the test names. */
export interface BuiltPackage {
  index: string;
  http: string;
  from: 'dist' | 'src bundled by the test';
}

const OUT = join(ROOT, 'test-artifacts', 'edge-package');

/** The entries to import, bundling src/ first when dist/ is missing or older than it. */
export async function builtPackage(): Promise<BuiltPackage> {
  const dist = { index: join(ROOT, 'dist/index.js'), http: join(ROOT, 'dist/http.js') };
  const problem = distProblem(dist.index, dist.http);
  if (problem === undefined) return { ...urls(dist.index, dist.http), from: 'dist' };
  if (inCi()) throw new Error(`${problem}: CI runs npm run build before the tests`);
  console.warn(`${problem}: bundling src/ with esbuild instead (npm run build to test dist/)`);
  await build({
    entryPoints: { index: join(ROOT, 'src/index.ts'), http: join(ROOT, 'src/http/index.ts') },
    outdir: OUT,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    packages: 'external',
    logLevel: 'silent',
  });
  return { ...urls(join(OUT, 'index.js'), join(OUT, 'http.js')), from: 'src bundled by the test' };
}

function distProblem(...entries: string[]): string | undefined {
  const missing = entries.find((file) => !existsSync(file));
  if (missing !== undefined) return `${missing} does not exist`;
  const built = Math.min(...entries.map((file) => statSync(file).mtimeMs));
  const src = join(ROOT, 'src');
  const newer = readdirSync(src, { recursive: true, encoding: 'utf8' }).find(
    (file) => statSync(join(src, file)).mtimeMs > built,
  );
  return newer === undefined ? undefined : `dist/ is older than src/${newer}`;
}

function urls(index: string, http: string): { index: string; http: string } {
  return { index: pathToFileURL(index).href, http: pathToFileURL(http).href };
}
