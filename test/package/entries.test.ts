/**
 * The entries are listed once, in tsup.config.ts, and every other list of them agrees: the subpaths
 * of package.json "exports", the typedoc entry points and the subpaths the packed-tarball smoke test
 * imports.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENTRIES } from '../../tsup.config.js';

type Condition = { types: string; default: string };
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  exports: Record<string, { import: Condition; require: Condition } | string>;
};

/** The subpath of an entry: `.` for `index`, `./http` for `http`. */
const subpath = (entry: string) => (entry === 'index' ? '.' : `./${entry}`);

describe('the entries', () => {
  it('are the subpaths of package.json, each ESM and CommonJS with its declarations', () => {
    expect(
      Object.keys(pkg.exports)
        .filter((key) => key !== './package.json')
        .sort(),
    ).toEqual(Object.keys(ENTRIES).map(subpath).sort());
    for (const entry of Object.keys(ENTRIES))
      expect(pkg.exports[subpath(entry)], entry).toEqual({
        import: { types: `./dist/${entry}.d.ts`, default: `./dist/${entry}.js` },
        require: { types: `./dist/${entry}.d.cts`, default: `./dist/${entry}.cjs` },
      });
  });

  it('are the typedoc entry points', () => {
    const typedoc = JSON.parse(readFileSync('typedoc.json', 'utf8')) as { entryPoints: string[] };
    expect([...typedoc.entryPoints].sort()).toEqual(Object.values(ENTRIES).sort());
  });

  it('are what the smoke test of the packed tarball imports', () => {
    const script = readFileSync('.ci/smoke-pack.sh', 'utf8');
    const subpaths = /^subpaths="([^"]*)"$/m.exec(script)![1]!.split(' ');
    expect([...subpaths].sort()).toEqual(
      Object.keys(ENTRIES)
        .map((entry) => (entry === 'index' ? 'stepwire' : `stepwire/${entry}`))
        .sort(),
    );
  });

  it('include stepwire/schema among the edge-safe entries the core tsconfig checks without Node types', () => {
    const core = JSON.parse(readFileSync('tsconfig.core.json', 'utf8')) as { include: string[] };
    expect(core.include).toEqual(expect.arrayContaining([ENTRIES.index, ENTRIES.schema, ENTRIES.http]));
  });
});
