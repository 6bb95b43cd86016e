import { afterAll, describe, expect, it } from 'vitest';
import { LimitError, ScriptError } from '../../src/errors/index.js';
import { QuickJsSandbox } from '../../src/script/index.js';
import { WorkerSandbox } from '../../src/adapters/node/worker-sandbox.js';
import { input } from './helpers.js';

const sandbox = new QuickJsSandbox();

async function logsOf(source: string): Promise<string[]> {
  return (await sandbox.run(input(source))).logs;
}

describe('QuickJsSandbox isolation', () => {
  it('exposes only the standard globals plus getEntity, writeEntity and console', async () => {
    const [names] = await logsOf('console.log(Object.getOwnPropertyNames(globalThis).sort().join(","))');
    const extra = (names ?? '').split(',').filter((name) => !STANDARD_GLOBALS.has(name));
    expect(extra.sort()).toEqual(['console', 'getEntity', 'writeEntity']);
  });

  it('has no process, require, fetch, timers or host objects', async () => {
    const logs = await logsOf(
      "console.log([typeof process, typeof require, typeof fetch, typeof setTimeout, typeof setInterval, typeof Buffer, typeof module].join(' '))",
    );
    expect(logs).toEqual(['undefined undefined undefined undefined undefined undefined undefined']);
  });

  it('refuses import()', async () => {
    const logs = await logsOf(
      "import('fs').then(() => console.log('loaded'), (e) => console.log('refused', e.name))",
    );
    expect(logs).toEqual(['refused ReferenceError']);
  });

  it('reaches only the guest global through Function constructors', async () => {
    const logs = await logsOf(`const g = Function('return this')();
console.log(g === globalThis, (function(){}).constructor('return typeof process')());
console.log(getEntity.constructor === Function, getEntity.constructor('return typeof require')());`);
    expect(logs).toEqual(['true undefined', 'true undefined']);
  });

  it('does not let prototype pollution inside the guest reach the host', async () => {
    await sandbox.run(
      input("Object.prototype.polluted = 1; Array.prototype.polluted = 1; writeEntity('totals', [{}])"),
    );
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(([] as unknown as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('refuses __proto__ keys in written rows without polluting host objects', async () => {
    const error = await sandbox
      .run(input(`writeEntity('totals', JSON.parse('[{"__proto__": {"polluted": 1}}]'))`))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as ScriptError).message).toContain('"__proto__"');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    const table = await sandbox
      .run(input(`writeEntity('totals', { columns: [{ name: '__proto__' }], rows: [[{ polluted: 1 }]] })`))
      .catch((e: unknown) => e);
    expect(table).toBeInstanceOf(ScriptError);
  });

  it('does not let a script replacing JSON break getEntity or writeEntity', async () => {
    const result = await sandbox.run(
      input(
        "JSON.parse = () => ({}); JSON.stringify = () => '[]'; writeEntity('totals', getEntity('orders').slice(0, 1))",
      ),
    );
    expect(result.writes['totals']).toEqual([{ id: 1, region: 'eu', amount: 10 }]);
  });

  it('leaks nothing across 200 runs', async () => {
    const source =
      "globalThis.big = 'x'.repeat(200000) + Math.random(); writeEntity('totals', getEntity('orders'))";
    const limits = { memoryBytes: 8 * 1024 * 1024 };
    for (let i = 0; i < 200; i++) {
      const result = await sandbox.run(input(source, limits));
      expect(result.writes['totals']).toHaveLength(4);
    }
    // 200 x 200 KB would be 40 MB; the 8 MiB memory cap would have failed a run if anything stayed.
    expect((await sandbox.run(input('console.log(typeof big)', limits))).logs).toEqual(['undefined']);
  });

  it('fails a run that ends past its time limit inside one long built-in call', async () => {
    // A backtracking regex runs inside one native call, which the interrupt handler cannot stop; the
    // run still overran its limit, so it fails rather than succeeding late.
    const source = "console.log(/^(a+)+$/.test('a'.repeat(22) + 'b'))";
    const started = performance.now();
    const error = await sandbox.run(input(source, { timeoutMs: 50 })).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThan(50);
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('script.timeout');
  });

  it('is cancelled by an already aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await sandbox.run({ ...input('1'), signal: controller.signal }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('CancelledError');
  });
});

describe('WorkerSandbox host protection', () => {
  const workers = new WorkerSandbox({ killGraceMs: 500 });
  afterAll(() => workers.close());

  it('keeps the host event loop responsive while a script spins', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const error = await workers.run(input('while (true) {}', { timeoutMs: 1000 })).catch((e: unknown) => e);
    clearInterval(timer);
    expect((error as LimitError).limit).toBe('script.timeout');
    expect(ticks).toBeGreaterThan(10);
  });

  it('keeps host memory bounded during a memory bomb', async () => {
    const before = process.memoryUsage().rss;
    const error = await workers
      .run(
        input("let a = []; while (1) a.push('x'.repeat(1e6) + a.length)", {
          memoryBytes: 32 * 1024 * 1024,
          timeoutMs: 20_000,
        }),
      )
      .catch((e: unknown) => e);
    const grown = process.memoryUsage().rss - before;
    expect((error as LimitError).limit).toBe('script.memory');
    expect(grown).toBeLessThan(200 * 1024 * 1024);
  });

  it('terminates the thread when an abort signal fires mid-run', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error = await workers
      .run({ ...input('while (true) {}', { timeoutMs: 10_000 }), signal: controller.signal })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('CancelledError');
    expect((await workers.run(input("writeEntity('totals', [{ ok: 1 }])"))).writes['totals']).toEqual([
      { ok: 1 },
    ]);
  });

  it('kills a run stuck in one long native call past timeout + grace', async () => {
    const started = Date.now();
    // One sort of a large array with a slow comparator-free native loop; QuickJS's deadline is checked rarely here.
    const error = await workers
      .run(
        input("const s = 'ab'.repeat(2e7); let n = 0; while (true) n += s.split('').length", {
          timeoutMs: 300,
          memoryBytes: 1024 * 1024 * 1024,
        }),
      )
      .catch((e: unknown) => e);
    expect(['script.timeout', 'script.memory']).toContain((error as LimitError).limit);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

const STANDARD_GLOBALS = new Set(
  'Object,Function,Error,EvalError,RangeError,ReferenceError,SyntaxError,TypeError,URIError,InternalError,AggregateError,Array,parseInt,parseFloat,isNaN,isFinite,decodeURI,decodeURIComponent,encodeURI,encodeURIComponent,escape,unescape,Infinity,NaN,undefined,Number,Boolean,String,Math,Reflect,Symbol,eval,globalThis,Date,RegExp,JSON,Proxy,Map,Set,WeakMap,WeakSet,ArrayBuffer,SharedArrayBuffer,Uint8ClampedArray,Int8Array,Uint8Array,Int16Array,Uint16Array,Int32Array,Uint32Array,BigInt64Array,BigUint64Array,Float32Array,Float64Array,DataView,Promise,BigInt'.split(
    ',',
  ),
);
