import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';

/** One entry per subpath export; see package.json "exports". */
export const ENTRIES = {
  index: 'src/index.ts',
  schema: 'src/schema-entry.ts',
  http: 'src/http/index.ts',
  google: 'src/adapters/google/index.ts',
  node: 'src/node/index.ts',
  postgres: 'src/adapters/postgres/index.ts',
  mcp: 'src/mcp/index.ts',
  testing: 'src/testing/index.ts',
};

/**
 * Extra files that are not subpaths: the worker thread of `WorkerSandbox` and the child process of
 * `IsolatedVmSandbox` (found beside `dist/node.*`), and the CLI.
 */
const INTERNAL = {
  'script-worker': 'src/adapters/node/script-worker.ts',
  'isolated-vm-worker': 'src/adapters/node/isolated-vm-worker.ts',
  cli: 'src/cli/main.ts',
};

const shared: Options = {
  dts: false,
  splitting: true,
  treeshake: true,
  sourcemap: false,
  clean: false,
  target: 'es2022',
  platform: 'neutral',
  external: [/^node:/, '@googleapis/sheets', '@googleapis/drive', 'exceljs', 'vitest', '@opentelemetry/api'],
};

const { testing, ...withoutTesting } = ENTRIES;

export default defineConfig([
  // The declarations of every entry, for both formats (`.d.ts`, `.d.cts`), in one TypeScript pass:
  // one per config would make three (half of the build's time).
  { ...shared, entry: { ...ENTRIES, ...INTERNAL }, format: ['esm', 'cjs'], dts: { only: true } },
  { ...shared, entry: { ...ENTRIES, ...INTERNAL }, format: ['esm'] },
  { ...shared, entry: { ...withoutTesting, ...INTERNAL }, format: ['cjs'] },
  {
    // vitest is ESM-only and refuses require(): the CJS build of stepwire/testing loads, and its
    // suites explain that they need `import`, through a stand-in for vitest.
    ...shared,
    entry: { testing },
    format: ['cjs'],
    external: [/^node:/],
    noExternal: ['vitest'],
    esbuildOptions(options) {
      options.alias = {
        vitest: fileURLToPath(new URL('./src/testing/vitest-unavailable.ts', import.meta.url)),
      };
    },
  },
]);
