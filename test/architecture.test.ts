import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CONFIG = resolve('.dependency-cruiser.cjs');
const DEPCRUISE = resolve('node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** Runs dependency-cruiser with the project's rules over `src` of `dir` and returns what it found. */
function violations(dir: string): Violation[] {
  let out: string;
  try {
    out = execFileSync(process.execPath, [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'json'], {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    // dependency-cruiser exits non-zero when it finds violations; its report is still on stdout.
    out = (error as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('architecture: the layering of .dependency-cruiser.cjs', () => {
  it('holds for src/: no import reaches up a layer, none goes in a circle (type-only imports included)', () => {
    const found = violations(process.cwd()).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
    expect(found).toEqual([]);
  });

  it('fails on a forbidden import, so the rules are in force', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepwire-architecture-'));
    try {
      const file = (path: string, text: string) => {
        mkdirSync(join(dir, path, '..'), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      file(
        'tsconfig.json',
        JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler' } }),
      );
      file('src/engine/engine.ts', 'export const engine = 1;\n');
      file(
        'src/schema/entity.ts',
        "import type { engine } from '../engine/engine.js';\nexport type E = typeof engine;\n",
      );
      file('src/http/handler.ts', "import { serve } from '../node/serve.js';\nexport const h = serve;\n");
      file('src/node/serve.ts', 'export const serve = 1;\n');
      const found = violations(dir).map((v) => v.rule.name);
      expect(found).toContain('schema-stays-below');
      expect(found).toContain('http-is-edge-safe');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
