import { execFile } from 'node:child_process';
import { cpSync, existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, pdfText, tempDir } from '../cli/helpers.js';

const run = promisify(execFile);
const temp = tempDir('guide');
afterAll(() => temp.remove());

/** The shell blocks of the guide, without what cannot run here: `npm ci`, a server that runs until stopped, Google. */
function guideCommands(): string[] {
  const text = readFileSync(join(ROOT, 'docs/getting-started.md'), 'utf8');
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks
    .map((block) =>
      block
        .split('\n')
        .filter((line) => !/^(npm ci|GOOGLE_)/.test(line) && !/ serve /.test(line))
        .join('\n'),
    )
    .filter((block) => block.trim() !== '');
}

describe('docs/getting-started.md', () => {
  it('every command of the guide works in a fresh folder with the repository files', async () => {
    // A workspace that looks like a clone: sources and installed packages linked, examples copied.
    for (const name of ['src', 'node_modules', 'package.json', 'tsconfig.json'])
      symlinkSync(join(ROOT, name), join(temp.dir, name));
    cpSync(join(ROOT, 'examples'), join(temp.dir, 'examples'), { recursive: true });
    const commands = guideCommands();
    expect(commands.length).toBeGreaterThanOrEqual(5);
    const outputs: string[] = [];
    for (const command of commands) {
      const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', command], {
        cwd: temp.dir,
        timeout: 120_000,
        env: { ...process.env, NO_COLOR: '1' },
      });
      outputs.push(stdout + stderr);
    }
    const all = outputs.join('\n');
    expect(all).toContain(
      '✓ my-shop is valid: 1 entity, 0 relationships, 0 scripts, 1 workflow, 0 applications',
    );
    expect(all).toContain('{ "file_url": "memory://files/report.pdf", "orders": 2 }');
    expect(all).toContain('wrote my-shop/out/report.pdf');
    expect(readFileSync(join(temp.dir, 'my-shop/out/report.pdf')).subarray(0, 5).toString('latin1')).toBe(
      '%PDF-',
    );
    const text = pdfText(join(temp.dir, 'my-shop/out/report.pdf'));
    if (text !== undefined) expect(text).toMatch(/Orders from 50[\s\S]*Desk, oak/);
    expect(readFileSync(join(temp.dir, 'my-shop/workflows.d.ts'), 'utf8')).toMatch(
      /export interface ReportInput \{\s+min_amount\?: number;/,
    );
    expect(existsSync(join(temp.dir, 'examples/out/invoice-1.pdf'))).toBe(true);
  }, 180_000); // several CLI processes, one after the other: slow on a loaded 2-core machine
});
