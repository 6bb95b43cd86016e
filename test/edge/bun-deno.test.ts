import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { BUN, DENO, toolVersion, type Tool } from '../helpers/tools.js';
import { builtPackage, type BuiltPackage } from './built-package.js';
import { expectScenario } from './expect-scenario.js';
import { SCENARIO, SHOP, type ScenarioResponse } from './scenario.js';

const run = promisify(execFile);
const PLAY = join(ROOT, 'test/edge/play.mjs');
/** Deno may read the repository and its node_modules (wherever it really lives); no network, env or writes. */
const DENO_READ = [ROOT, realpathSync(join(ROOT, 'node_modules'))].join(',');

const RUNTIMES: { label: string; tool: Tool; args: string[] }[] = [
  { label: 'Bun', tool: BUN, args: ['run', PLAY] },
  {
    label: 'Deno',
    tool: DENO,
    args: ['run', `--allow-read=${DENO_READ}`, '--no-prompt', '--no-lock', '--cached-only', PLAY],
  },
];

let pending: Promise<BuiltPackage> | undefined;

for (const runtime of RUNTIMES) {
  const found = toolVersion(runtime.tool);
  const version = /\d+\.\d+\.\d+/.exec(found?.version ?? '')?.[0] ?? '(missing)';
  describe.skipIf(found === undefined)(`stepwire and stepwire/http in ${runtime.label} ${version}`, () => {
    it('runs a workflow through createHandler: read an entity, QuickJS transform, output', async () => {
      const built = await (pending ??= builtPackage());
      const scenario = JSON.stringify({ sheets: SHOP, requests: SCENARIO });
      const { stdout } = await run(found!.path, [...runtime.args, built.index, built.http, scenario], {
        cwd: ROOT,
        timeout: 60_000,
        env: { ...process.env, NO_COLOR: '1' },
      });
      const responses = JSON.parse(stdout.trim().split('\n').at(-1)!) as ScenarioResponse[];
      expectScenario(responses);
    }, 120_000);
  });
}
