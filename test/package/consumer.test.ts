/**
 * The published declarations as a TypeScript user meets them: the packed tarball installed into a
 * scratch project and compiled with `strict`, `module`/`moduleResolution` `nodenext`, `target`
 * `es2022`, `skipLibCheck` off and no `@types/node`. The README's ten lines compile, a typo in them
 * does not, and the error names it.
 *
 * The tarball holds dist/ when it is newer than every file in src/ (CI builds first); otherwise the
 * declarations are built here, by the declaration pass of tsup.config.ts, into a copy of the package.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { build, type Options } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import tsupConfig from '../../tsup.config.js';
import { ROOT } from '../cli/helpers.js';
import { inCi } from '../helpers/tools.js';

const WORK = join(ROOT, 'test-artifacts', 'consumer');
const APP = join(WORK, 'app');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/** The options a user's strict Node project compiles with: no `@types/node`, libraries checked too. */
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    skipLibCheck: false,
    types: [],
    noEmit: true,
  },
  files: ['readme.ts', 'entries.ts'],
};

/** The code block of the README's "Ten lines" section. */
function readmeTenLines(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  return /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## Ten lines')))![1]!;
}

/** Why dist/ cannot be packed as it is, or `undefined` when it is newer than every file in src/. */
function distProblem(): string | undefined {
  const entry = join(ROOT, 'dist/index.d.ts');
  if (!existsSync(entry)) return 'dist/index.d.ts does not exist';
  const built = statSync(entry).mtimeMs;
  const src = join(ROOT, 'src');
  const newer = readdirSync(src, { recursive: true, encoding: 'utf8' }).find(
    (file) => statSync(join(src, file)).mtimeMs > built,
  );
  return newer === undefined ? undefined : `dist/ is older than src/${newer}`;
}

/** The folder to pack: the package itself, or a copy with declarations built from src/. */
async function packageFolder(): Promise<string> {
  const problem = distProblem();
  if (problem === undefined) return ROOT;
  if (inCi()) throw new Error(`${problem}: CI runs npm run build before the tests`);
  const folder = join(WORK, 'package');
  mkdirSync(folder, { recursive: true });
  for (const file of ['package.json', 'README.md']) copyFileSync(join(ROOT, file), join(folder, file));
  // The first configuration is the declaration pass of `npm run build`.
  const [declarations] = tsupConfig as Options[];
  await build({ ...declarations, outDir: join(folder, 'dist'), silent: true, config: false });
  return folder;
}

/** Runs the compiler in the scratch project; `output` holds what it printed. */
function compile(): { ok: boolean; output: string } {
  const result = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: APP, encoding: 'utf8' });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
}

beforeAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(APP, { recursive: true });
  const folder = await packageFolder();
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', WORK, folder], {
    encoding: 'utf8',
  });
  const tarball = join(WORK, packed.trim().split('\n').at(-1)!);
  writeFileSync(join(APP, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], {
    cwd: APP,
    stdio: 'pipe',
  });
  writeFileSync(join(APP, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  writeFileSync(
    join(APP, 'entries.ts'),
    [
      "import { EntitySchema, check } from 'stepwire/schema';",
      "import { createHandler } from 'stepwire/http';",
      'export const checked = check(EntitySchema, {}).ok;',
      'export const handler = createHandler;',
      '',
    ].join('\n'),
  );
}, 900_000);

afterAll(() => rmSync(WORK, { recursive: true, force: true }));

describe('the packed package in a strict nodenext project without @types/node', () => {
  it('has no @types/node to lean on', () => {
    expect(existsSync(join(APP, 'node_modules/@types/node'))).toBe(false);
  });

  it('compiles the README ten lines, and stepwire/schema and stepwire/http', () => {
    writeFileSync(join(APP, 'readme.ts'), readmeTenLines());
    const { ok, output } = compile();
    expect(output).toBe('');
    expect(ok).toBe(true);
  }, 120_000);

  it('refuses a column type spelt wrong, naming it and the types there are', () => {
    const code = readmeTenLines();
    expect(code).toContain("type: 'NUMBER'");
    writeFileSync(join(APP, 'readme.ts'), code.replace("type: 'NUMBER'", "type: 'TEXT'"));
    const { ok, output } = compile();
    expect(ok).toBe(false);
    expect(output).toMatch(
      /^readme\.ts\(\d+,\d+\): error TS\d+: Type '"TEXT"' is not assignable to type '"NUMBER" \| "STRING"/m,
    );
    expect(output.trim().split('\n')).toHaveLength(1);
  }, 120_000);
});
