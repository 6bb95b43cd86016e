import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it, vi } from 'vitest';

it('runs the README example and prints what its comment says', async () => {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Ten lines'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
  const expected = /console\.log\([^)]*\); \/\/ (.*)$/m.exec(code)![1]!;
  const file = join(mkdtempSync(join(tmpdir(), 'stepwire-readme-')), 'example.ts');
  writeFileSync(
    file,
    code.replace(/from 'stepwire'/g, `from ${JSON.stringify(pathToFileURL(resolve('src/index.ts')).href)}`),
  );
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  try {
    await import(/* @vite-ignore */ pathToFileURL(file).href);
    expect(log).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(log.mock.calls[0]![0]).replace(/,/g, ', ')).toBe(expected);
  } finally {
    log.mockRestore();
  }
});
