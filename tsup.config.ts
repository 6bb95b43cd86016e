import { defineConfig } from 'tsup';

/** One entry per subpath export; see package.json "exports". */
export const ENTRIES = {
  index: 'src/index.ts',
  http: 'src/http/index.ts',
  google: 'src/adapters/google/index.ts',
  node: 'src/adapters/node/index.ts',
  testing: 'src/testing/index.ts',
};

/** Extra files that are not subpaths: the worker thread of `WorkerSandbox`, found beside `dist/node.*`. */
const INTERNAL = {
  'script-worker': 'src/adapters/node/script-worker.ts',
  cli: 'src/cli/main.ts',
};

export default defineConfig({
  entry: { ...ENTRIES, ...INTERNAL },
  format: ['esm', 'cjs'],
  dts: true,
  splitting: true,
  treeshake: true,
  sourcemap: false,
  clean: true,
  target: 'es2022',
  platform: 'neutral',
  external: [/^node:/, '@googleapis/sheets', '@googleapis/drive', 'vitest'],
});
