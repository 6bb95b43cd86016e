import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, stepwire, tempDir } from './helpers.js';

const temp = tempDir('cli-mistakes');
afterAll(() => temp.remove());
const typo = join(temp.dir, 'typo-dir');

/** Only the one line: no stack trace, no second copy. */
function oneLine(stderr: string): string {
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return stderr.trimEnd();
}

describe('stepwire names a user mistake in one line', () => {
  it('serve and worker on a missing folder: "is not a folder", exit 1, nothing created', async () => {
    const [serve, worker] = await Promise.all([
      stepwire(['serve', typo, '--port', '0']),
      stepwire(['worker', typo]),
    ]);
    for (const [command, result] of [
      ['serve', serve],
      ['worker', worker],
    ] as const) {
      expect(result.code, command).toBe(1);
      expect(oneLine(result.stderr)).toBe(`stepwire ${command}: ${typo} is not a folder`);
    }
    expect(existsSync(typo)).toBe(false);
  });

  it('run, graph, triggers and types on a missing folder say so once', async () => {
    const results = await Promise.all([
      stepwire(['run', typo, 'x', '--db', join(temp.dir, 'db')]),
      stepwire(['graph', typo, 'x']),
      stepwire(['triggers', typo]),
      stepwire(['types', typo]),
    ]);
    for (const [i, command] of ['run', 'graph', 'triggers', 'types'].entries()) {
      expect(results[i]!.code, command).toBe(1);
      expect(oneLine(results[i]!.stderr)).toBe(`stepwire ${command}: ${typo} is not a folder`);
    }
    expect(existsSync(typo) || existsSync(join(temp.dir, 'db'))).toBe(false);
  });

  it('graph --out and types --out into a missing folder name the file and why, exit 1', async () => {
    const missing = join(temp.dir, 'nodir');
    const [graph, types] = await Promise.all([
      stepwire(['graph', 'examples/invoices', 'invoice', '--out', join(missing, 'g.svg')]),
      stepwire(['types', 'examples/invoices', '--out', join(missing, 'x.ts')]),
    ]);
    expect(graph.code).toBe(1);
    expect(oneLine(graph.stderr)).toBe(
      `stepwire graph: cannot write --out ${join(missing, 'g.svg')}: its folder ${missing} does not exist`,
    );
    expect(types.code).toBe(1);
    expect(oneLine(types.stderr)).toBe(
      `stepwire types: cannot write --out ${join(missing, 'x.ts')}: its folder ${missing} does not exist`,
    );
  });

  it('run --db naming a file, or nothing, is a usage error naming --db', async () => {
    const [file, empty] = await Promise.all([
      stepwire(['run', 'examples/invoices', 'invoice', '--db', './package.json']),
      stepwire(['run', 'examples/invoices', 'invoice', '--db=']),
    ]);
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(
      /^stepwire run: --db \.\/package\.json is not a folder or postgres:\/\/ URL\n/,
    );
    expect(file.stderr).toMatch(/Usage: stepwire run/);
    expect(file.stderr).not.toMatch(/\n\s+at /);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^stepwire run: --db must name a postgres:\/\/ URL or a folder\n/);
  });

  it('serve --port with no number is a usage error naming --port', async () => {
    const result = await stepwire(['serve', 'examples/invoices', '--memory', '--port', ''], {
      timeoutMs: 30_000,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^stepwire serve: --port must be a whole number from 0 to 65535, got ""\n/);
    expect(result.stdout).toBe('');
  });

  it('validate reports a script that does not parse, with its file and line, without running it', async () => {
    const project = join(temp.dir, 'syntax');
    cpSync(join(ROOT, 'examples/invoices'), project, { recursive: true });
    const marker = join(temp.dir, 'ran');
    writeFileSync(
      join(project, 'scripts/x.js'),
      `// ran if ${marker} exists\nconst a = 1;\nthis is not js (\n`,
    );
    writeFileSync(join(project, 'scripts/fine.js'), 'const b = [1, 2].map((n) => n * 2);\n');
    const result = await stepwire(['validate', project]);
    expect(result.code).toBe(1);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      `✗ ${project} has 1 problem:`,
      "  scripts/x.js: syntax error at line 3: Unexpected identifier 'is'",
    ]);
    // A broken definition and a broken script are listed together.
    writeFileSync(join(project, 'workflows/broken.json'), '{');
    const both = await stepwire(['validate', project]);
    expect(both.code).toBe(1);
    expect(both.stdout).toMatch(/workflows\/broken\.json: invalid JSON/);
    expect(both.stdout).toMatch(/scripts\/x\.js: syntax error at line 3/);
  });
});
