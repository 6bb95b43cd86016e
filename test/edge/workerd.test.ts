import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectScenario } from './expect-scenario.js';
import { CUSTOMERS, SCENARIO, type ScenarioResponse } from './scenario.js';

const ENTRY = fileURLToPath(new URL('./worker.ts', import.meta.url));
const QUICKJS_WASM = '@jitl/quickjs-wasmfile-release-sync/wasm';
const require = createRequire(import.meta.url);
/** The npm version of workerd that miniflare runs, e.g. 1.20260131.0 (its release date). */
const WORKERD_VERSION = (require('workerd/package.json') as { version: string }).version;

/**
 * Leaves the QuickJS `.wasm` import external: workerd gets the file as a `CompiledWasm` module,
 * since a worker cannot compile WebAssembly from bytes at run time.
 */
const wasmAsModule: Plugin = {
  name: 'wasm-as-module',
  setup(b) {
    b.onResolve({ filter: /\/wasm$/ }, (args) =>
      args.path === QUICKJS_WASM ? { path: './quickjs.wasm', external: true } : undefined,
    );
  },
};

/** Fails the build on any Node built-in, with or without the `node:` prefix. */
const noNodeBuiltins: Plugin = {
  name: 'no-node-builtins',
  setup(b) {
    const builtins = new Set([
      'assert',
      'buffer',
      'child_process',
      'crypto',
      'events',
      'fs',
      'http',
      'https',
      'module',
      'net',
      'os',
      'path',
      'process',
      'stream',
      'tls',
      'url',
      'util',
      'worker_threads',
      'zlib',
    ]);
    b.onResolve({ filter: /.*/ }, (args) => {
      const bare = args.path.replace(/^node:/, '').split('/')[0]!;
      if (args.path.startsWith('node:') || builtins.has(bare)) {
        return {
          errors: [
            { text: `Node built-in "${args.path}" imported by ${args.importer}; the core must be edge-safe` },
          ],
        };
      }
      return undefined;
    });
  },
};

async function bundle(): Promise<{ code: string; bytes: number }> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: true,
    logLevel: 'silent',
    plugins: [wasmAsModule, noNodeBuiltins],
    loader: { '.wasm': 'binary', '.ttf': 'binary', '.afm': 'text' },
  });
  const code = result.outputFiles[0]!.text;
  return { code, bytes: result.outputFiles[0]!.contents.byteLength };
}

let mf: Miniflare;
let bytes = 0;
const played: ScenarioResponse[] = [];

beforeAll(async () => {
  const built = await bundle();
  bytes = built.bytes;
  const wasm = await readFile(require.resolve(QUICKJS_WASM));
  mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: 'worker.mjs', contents: built.code },
      { type: 'CompiledWasm', path: 'quickjs.wasm', contents: wasm },
    ],
    compatibilityDate: '2025-01-01',
  });
  await mf.ready;
  for (const request of SCENARIO)
    played.push(await send(request.method, request.path, request.body, request.type));
}, 60_000);
afterAll(() => mf?.dispose());

async function send(method: string, path: string, body?: unknown, type = 'application/json') {
  const init: { method: string; body?: string; headers?: Record<string, string> } = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': type };
  }
  const response = await mf.dispatchFetch(`http://localhost${path}`, init);
  const text = await response.text();
  const contentType = response.headers.get('content-type');
  return {
    status: response.status,
    type: contentType,
    body: /json/.test(contentType ?? '') ? JSON.parse(text) : text,
  };
}

describe(`stepwire and stepwire/http in workerd ${WORKERD_VERSION} (miniflare)`, () => {
  it('bundles without any Node built-in (and the guard does catch one)', async () => {
    expect(bytes).toBeGreaterThan(10_000);
    const guarded = build({
      stdin: { contents: "import { readFileSync } from 'fs'; export const f = readFileSync;" },
      bundle: true,
      write: false,
      platform: 'browser',
      logLevel: 'silent',
      plugins: [noNodeBuiltins],
    });
    await expect(guarded).rejects.toThrow(/Node built-in "fs"/);
  });

  it('runs a workflow: read an entity, QuickJS transform (the .wasm as a compiled module), output', () => {
    expectScenario(played);
  });

  it('without wasmModule, a transform fails saying to pass new QuickJsSandbox({ wasmModule })', async () => {
    const answers = [];
    for (const request of SCENARIO)
      answers.push(await send(request.method, `/__bare${request.path}`, request.body, request.type));
    const run = answers.at(-1)!;
    expect(run.body.status).toBe('failed');
    expect(run.body.error).toMatchObject({
      code: 'sandbox_unavailable',
      message: expect.stringContaining('new QuickJsSandbox({ wasmModule })'),
    });
  });

  it('refuses a duplicate entity, filters a read, runs a lookup and answers problem+json', async () => {
    // The scenario registered customers.
    expect((await send('POST', '/catalog/entity', CUSTOMERS)).status).toBe(409);
    const read = await send('POST', '/catalog/entities/customers/read', {
      operation: { filters: [{ column: 'city', operator: 'EQUALS', value: 'London' }] },
    });
    expect(read.status).toBe(200);
    expect(read.body.body.table.rows).toEqual([[1, 'Ada', 'London']]);

    const workflow = {
      name: 'lookup',
      steps: [
        {
          name: 'hello',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { id: '{{input.id}}' },
          },
        },
        {
          name: 'read',
          type: 'l2',
          l2_data: {
            provider: 'catalog',
            module: 'action',
            action: 'get_entity',
            input_data: {
              entity_name: 'customers',
              operation: {
                filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: '{{input.id}}' }],
              },
            },
          },
        },
      ],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] },
      },
      workflow_output: { name: 'output', output_data: { name: '{{read.body.table.rows[0][1]}}' } },
    };
    expect((await send('POST', '/workflows', workflow)).status).toBe(201);
    const run = await send('POST', '/workflows/lookup/runs', { id: 2 });
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('succeeded');
    expect(run.body.output).toEqual({ name: 'Grace' });
    const record = await send('GET', `/runs/${run.body.id}`);
    expect(record.body.status).toBe('succeeded');
    const invalid = await send('POST', '/workflows/lookup/runs', { id: 'two' });
    expect(invalid.status).toBe(400);
    expect(invalid.type).toBe('application/problem+json');
    expect((await send('GET', '/openapi.json')).body.openapi).toBe('3.1.0');
  });
});
