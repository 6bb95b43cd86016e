import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ENTRY = fileURLToPath(new URL('./worker.ts', import.meta.url));
const QUICKJS_WASM = '@jitl/quickjs-wasmfile-release-sync/wasm';

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

beforeAll(async () => {
  const built = await bundle();
  bytes = built.bytes;
  const wasm = await readFile(createRequire(import.meta.url).resolve(QUICKJS_WASM));
  mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: 'worker.mjs', contents: built.code },
      { type: 'CompiledWasm', path: 'quickjs.wasm', contents: wasm },
    ],
    compatibilityDate: '2025-01-01',
  });
  await mf.ready;
}, 60_000);
afterAll(() => mf?.dispose());

async function send(method: string, path: string, body?: unknown) {
  const init: { method: string; body?: string; headers?: Record<string, string> } = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const response = await mf.dispatchFetch(`http://localhost${path}`, init);
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: text ? JSON.parse(text) : undefined,
  };
}

describe('the handler inside workerd (miniflare)', () => {
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

  it('registers an entity, reads it, creates a workflow and runs it', async () => {
    const entity = {
      name: 'customers',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'name', type: 'STRING' },
        { name: 'city', type: 'STRING' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'customers', origin: { row: 0, col: 0 } },
    };
    expect((await send('POST', '/catalog/entity', entity)).status).toBe(201);
    expect((await send('POST', '/catalog/entity', entity)).status).toBe(409);
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

  it('runs a QuickJS transform script (the .wasm as a compiled module) and writes its rows', async () => {
    const sheet = (name: string) => ({
      spreadsheet_id: 'shop',
      sheet_name: name,
      origin: { row: 0, col: 0 },
    });
    const orders = {
      name: 'orders',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'customer_id', type: 'NUMBER' },
        { name: 'amount', type: 'NUMBER' },
      ],
      primary_key: ['id'],
      spreadsheet_config: sheet('orders'),
    };
    const totals = {
      name: 'order_totals',
      columns: [
        { name: 'customer_id', type: 'NUMBER' },
        { name: 'orders', type: 'NUMBER' },
        { name: 'total', type: 'NUMBER' },
      ],
      primary_key: ['customer_id'],
      spreadsheet_config: sheet('totals'),
    };
    expect((await send('POST', '/catalog/entity', orders)).status).toBe(201);
    expect((await send('POST', '/catalog/entity', totals)).status).toBe(201);
    const script = [
      'const totals = new Map();',
      "for (const order of getEntity('orders')) {",
      '  const t = totals.get(order.customer_id) ?? { customer_id: order.customer_id, orders: 0, total: 0 };',
      '  t.orders += 1;',
      '  t.total += order.amount;',
      '  totals.set(order.customer_id, t);',
      '}',
      "console.log('customers', totals.size);",
      "writeEntity('order_totals', [...totals.values()]);",
    ].join('\n');
    const stored = await mf.dispatchFetch('http://localhost/scripts/summarize.js', {
      method: 'PUT',
      body: script,
      headers: { 'content-type': 'application/javascript' },
    });
    expect(stored.status).toBe(201);
    await stored.text();

    const workflow = {
      name: 'summarize_orders',
      steps: [
        {
          name: 'summarize',
          type: 'atlas',
          atlas_data: {
            action: 'transform',
            input_data: { language: 'javascript', code_file: 'summarize.js' },
            input_entities: [{ name: 'orders' }],
            output_entities: [{ name: 'order_totals', write_mode: 'append' }],
          },
        },
      ],
      wires: [],
    };
    expect((await send('POST', '/workflows', workflow)).status).toBe(201);
    const run = await send('POST', '/workflows/summarize_orders/runs', {});
    expect(run.status).toBe(200);
    // The error (if any) is in the comparison so a failure shows why, e.g. the wasm did not load.
    expect({ status: run.body.status, error: run.body.error }).toEqual({ status: 'succeeded', error: null });
    expect(run.body.output).toEqual({ summarize: { written: { order_totals: 3 } } });
    expect(run.body.steps[0].logs).toEqual(['customers 3']);
    const read = await send('POST', '/catalog/entities/order_totals/read', {});
    expect(read.status).toBe(200);
    expect(read.body.body.table.rows).toEqual([
      [1, 2, 175.5],
      [2, 1, 80],
      [3, 1, 2],
    ]);
  });
});
