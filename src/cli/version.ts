import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The version of the stepwire package this command belongs to. @internal */
export async function readVersion(): Promise<string> {
  const here = typeof __filename === 'string' ? __filename : fileURLToPath(import.meta.url);
  // src/cli/version.ts and dist/<chunk>.js both sit below the package root.
  for (let dir = dirname(here), i = 0; i < 4; i++, dir = dirname(dir)) {
    const text = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    const pkg = JSON.parse(text) as { name?: string; version?: string };
    if (pkg.name === 'stepwire' && pkg.version) return pkg.version;
  }
  return 'unknown';
}
