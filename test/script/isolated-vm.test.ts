import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { IsolatedVmSandbox } from '../../src/adapters/node/isolated-vm-sandbox.js';
import { Engine, MemorySpreadsheets } from '../../src/index.js';
import { LimitError, StepwireError } from '../../src/errors/index.js';
import { QuickJsSandbox, type EntityData, type ScriptInput } from '../../src/script/index.js';
import { failure, input } from './helpers.js';

// What IsolatedVmSandbox does beyond what every sandbox does (the shared suites run it too, through
// bothSandboxes): V8's own globals, child processes that a crash takes down alone, the engine.
const sandbox = new IsolatedVmSandbox({ killGraceMs: 500 });
afterAll(() => sandbox.close());

/** The pids of the sandbox's child processes (`isolated-vm-worker`) whose parent is `pid`. */
function sandboxChildrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('isolated-vm-worker'))
      .map((line) => Number.parseInt(line.trim(), 10));
  } catch {
    return []; // ps exits 1 when there is none
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `read` every 50 ms until `done` holds of its value, for at most 10 s; the last value read. */
async function until<T>(read: () => T, done: (value: T) => boolean): Promise<T> {
  let value = read();
  for (let waited = 0; !done(value) && waited < 10_000; waited += 50) {
    await sleep(50);
    value = read();
  }
  return value;
}

async function logsOf(source: string): Promise<string[]> {
  return (await sandbox.run(input(source))).logs;
}

describe('IsolatedVmSandbox isolation', () => {
  it("exposes only V8's own globals (its console replaced) plus getEntity and writeEntity", async () => {
    const [names] = await logsOf('console.log(Object.getOwnPropertyNames(globalThis).sort().join(","))');
    // A fresh node:vm context holds the same V8's built-ins, console included, and nothing of Node's.
    const standard = new Set(runInNewContext('Object.getOwnPropertyNames(globalThis)') as string[]);
    const extra = (names ?? '').split(',').filter((name) => !standard.has(name));
    expect(extra.sort()).toEqual(['getEntity', 'writeEntity']);
  });

  it('has no process, require, fetch, timers or host objects, and refuses import()', async () => {
    const logs = await logsOf(
      "console.log([typeof process, typeof require, typeof fetch, typeof setTimeout, typeof Buffer, typeof module].join(' '));" +
        "import('fs').then(() => console.log('loaded'), (e) => console.log('refused', e.message))",
    );
    expect(logs).toEqual([
      'undefined undefined undefined undefined undefined undefined',
      'refused Not supported',
    ]);
  });

  it('reaches only the guest global through Function constructors', async () => {
    const logs = await logsOf(`const g = Function('return this')();
console.log(g === globalThis, getEntity.constructor === Function, getEntity.constructor('return typeof process')());`);
    expect(logs).toEqual(['true true undefined']);
  });

  it('starts every run with fresh globals: 200 runs leave nothing behind', async () => {
    const source = "globalThis.big = 'x'.repeat(200000) + Math.random(); Array.prototype.polluted = 1;";
    for (let i = 0; i < 200; i++) await sandbox.run(input(source, { memoryBytes: 8 * 1024 * 1024 }));
    expect(await logsOf('console.log(typeof big, [].polluted)')).toEqual(['undefined undefined']);
  });

  it('does not let a script replacing JSON, Promise.prototype.then or Error.prepareStackTrace change its outcome', async () => {
    const result = await sandbox.run(
      input(`JSON.parse = () => ({}); JSON.stringify = () => '[]';
Promise.prototype.then = function () { throw new Error('replaced'); };
writeEntity('totals', getEntity('orders').slice(0, 1));`),
    );
    expect(result.writes['totals']).toEqual([{ id: 1, region: 'eu', amount: 10 }]);
    // The stack it makes is no V8 stack: the error keeps its message, without a line.
    const error = await failure(sandbox.run(input('Error.prepareStackTrace = () => 5;\n\nnull.x;')));
    expect(error.message).toBe("TypeError: Cannot read properties of null (reading 'x')");
  });
});

describe('IsolatedVmSandbox outcomes as in QuickJS', () => {
  const quickjs = new QuickJsSandbox();
  /** The writes and logs, or the error message, of a run in both sandboxes. */
  const both = (run: ScriptInput) =>
    Promise.all(
      [quickjs, sandbox].map((one) =>
        one.run(run).then(
          (result) => result as unknown,
          (error: unknown) => (error as Error).message,
        ),
      ),
    );

  it('has no WebAssembly, whose memories the memory limit would not count', async () => {
    expect(await logsOf('console.log(typeof WebAssembly, typeof globalThis.WebAssembly)')).toEqual([
      'undefined undefined',
    ]);
  });

  it('makes plain buffers only: resizable and growable ones would lie outside the memory limit', async () => {
    const logs = await logsOf(`const b = new ArrayBuffer(0, { maxByteLength: 2 ** 30 });
class Big extends ArrayBuffer { constructor() { super(16, { maxByteLength: 2 ** 30 }); } }
const s = Reflect.construct(SharedArrayBuffer, [8, { maxByteLength: 2 ** 30 }]);
console.log(b.resizable, new Big().resizable, new Big() instanceof Big, s.growable, s instanceof SharedArrayBuffer);
console.log(Object.getPrototypeOf(new Uint8Array(2).buffer).constructor === ArrayBuffer, ArrayBuffer.isView(new Uint8Array(1)));`);
    expect(logs).toEqual(['false false true false true', 'true true']);
  });

  it('ends a run whose process grows past its memory limit outside the heap (ICU objects)', async () => {
    const error = await failure(
      sandbox.run(
        input("const a = []; for (;;) a.push(new Intl.DateTimeFormat('en', { timeZone: 'UTC' }));", {
          memoryBytes: 16 * 1024 * 1024,
          timeoutMs: 30_000,
        }),
      ),
    );
    expect((error as LimitError).limit).toBe('script.memory');
    expect(await logsOf("console.log('next')")).toEqual(['next']);
  }, 60_000);

  it('lets a promise the script rejected and dropped be, as QuickJS does', async () => {
    const [inQuickJs, inV8] = await both(
      input("Promise.reject(new Error('dropped'));\nwriteEntity('totals', [{ ok: 1 }]);"),
    );
    expect(inV8).toEqual({ writes: { totals: [{ ok: 1 }] }, logs: [] });
    expect(inV8).toEqual(inQuickJs);
    // The promise the script ends with still decides its outcome.
    const error = await failure(
      sandbox.run(input("Promise.reject(new Error('dropped'));\nPromise.reject(new Error('last'));")),
    );
    expect(error.message).toBe('line 2: Error: last');
  });

  it('lets no work a run leaves behind reach the next run', async () => {
    await sandbox.run(
      input(
        'Atomics.waitAsync(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20).value.then(() => { while (true) {} });\n' +
          'new FinalizationRegistry(() => { while (true) {} }).register({}, 1);',
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    expect(await logsOf("console.log('next')")).toEqual(['next']);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("keeps the runner out of a script function's reach through caller", async () => {
    const logs = await logsOf('function f() { return f.caller; }\nconsole.log(String(f()));');
    expect(logs).toEqual(['null']);
  });

  it('reads and writes an entity named __proto__ as any other', async () => {
    const inputs: Record<string, EntityData> = {};
    Object.defineProperty(inputs, '__proto__', {
      value: { columns: [{ name: 'n', type: 'NUMBER' }], rows: [[1], [2]] },
      enumerable: true,
    });
    const [inQuickJs, inV8] = await both({
      ...input("writeEntity('__proto__', getEntity('__proto__'))"),
      inputs,
      outputs: ['__proto__'],
    });
    expect(JSON.stringify(inV8)).toBe('{"writes":{"__proto__":[{"n":1},{"n":2}]},"logs":[]}');
    expect(JSON.stringify(inV8)).toBe(JSON.stringify(inQuickJs));
  });

  it('gives input cells JSON cannot carry as JSON gives them', async () => {
    const cells: EntityData = {
      columns: [{ name: 'v', type: 'ANY' }],
      rows: [[() => 1], [Symbol('s')], [{ toJSON: () => 'json' }], [new Date(0)]],
    };
    const [inQuickJs, inV8] = await both({
      ...input("writeEntity('totals', getEntity('cells'))"),
      inputs: { cells },
    });
    expect(inV8).toEqual({
      writes: { totals: [{ v: null }, { v: null }, { v: 'json' }, { v: '1970-01-01T00:00:00.000Z' }] },
      logs: [],
    });
    expect(inV8).toEqual(inQuickJs);
  });
});

describe('IsolatedVmSandbox host protection', () => {
  it('fails a script that makes V8 end its process for want of memory, and runs the next one', async () => {
    // A Map grown past the limit makes V8 abort the whole process, not just the isolate: only the
    // child process dies.
    const error = await failure(
      sandbox.run(
        input('const m = new Map(); for (let i = 0; ; i++) m.set(i, { i });', {
          memoryBytes: 16 * 1024 * 1024,
          timeoutMs: 30_000,
        }),
      ),
    );
    expect(error).toBeInstanceOf(LimitError);
    expect(error.message).toBe('script exceeded its memory limit of 16 MiB');
    expect(await logsOf("console.log('next')")).toEqual(['next']);
  }, 60_000);

  it('keeps the host event loop responsive while a script spins or waits', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const spin = await failure(sandbox.run(input('while (true) {}', { timeoutMs: 600 })));
    const wait = await failure(
      sandbox.run(input('Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)', { timeoutMs: 600 })),
    );
    clearInterval(timer);
    expect([(spin as LimitError).limit, (wait as LimitError).limit]).toEqual([
      'script.timeout',
      'script.timeout',
    ]);
    expect(ticks).toBeGreaterThan(20);
  });

  it('ends a script that spends its time in host calls at its time limit, without killing its process', async () => {
    await sandbox.run(input('1'));
    const children = sandboxChildrenOf(process.pid);
    expect(children).toHaveLength(1);
    for (const loop of [
      "console.log('x')",
      "writeEntity('totals', [])",
      "try { getEntity('orders') } catch {}",
    ]) {
      const error = await failure(sandbox.run(input(`while (true) ${loop}`, { timeoutMs: 300 })));
      expect([loop, (error as LimitError).limit]).toEqual([loop, 'script.timeout']);
    }
    // V8 misses its termination while the host serves a call; the host ends the run, not the kill.
    expect(sandboxChildrenOf(process.pid)).toEqual(children);
  });

  it('stops a run when its signal aborts mid-run, and runs the next one', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error = await failure(
      sandbox.run({ ...input('while (true) {}', { timeoutMs: 10_000 }), signal: controller.signal }),
    );
    expect(error.name).toBe('CancelledError');
    expect((await sandbox.run(input("writeEntity('totals', [{ ok: 1 }])"))).writes['totals']).toEqual([
      { ok: 1 },
    ]);
  });

  it('leaves no child process behind when its host is killed mid-run', async () => {
    const host = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'isolated-vm-host.ts')],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      await new Promise((resolve) => host.stdout.once('data', resolve));
      const children = await until(
        () => sandboxChildrenOf(host.pid!),
        (pids) => pids.length > 0,
      );
      expect(children).toHaveLength(1);
      host.kill('SIGKILL');
      // The child sees its channel to the host close and ends, its script still spinning.
      expect(
        await until(
          () => alive(children[0]!),
          (up) => !up,
        ),
      ).toBe(false);
    } finally {
      host.kill('SIGKILL');
    }
  });

  it('runs scripts side by side in a pool of processes', async () => {
    const pool = new IsolatedVmSandbox({ poolSize: 2 });
    try {
      const started = Date.now();
      const busy = 'const end = Date.now() + 400; while (Date.now() < end) {} console.log("done")';
      const results = await Promise.all([pool.run(input(busy)), pool.run(input(busy))]);
      expect(results.map((result) => result.logs)).toEqual([['done'], ['done']]);
      // One process would take 800 ms; two take about 400 each, side by side (start-up aside).
      expect(Date.now() - started).toBeLessThan(800 + 3000);
    } finally {
      await pool.close();
    }
  });

  it('fails runs with the reason when its child process cannot start', async () => {
    const broken = new IsolatedVmSandbox({ workerUrl: new URL('file:///nonexistent/isolated-vm-worker.js') });
    try {
      const error = await failure(broken.run(input('1')));
      expect(error).toBeInstanceOf(StepwireError);
      expect((error as StepwireError).code).toBe('script_worker_failed');
      expect(error.message).toBe('the script process exited with code 1');
    } finally {
      await broken.close();
    }
  });

  it('refuses runs once closed', async () => {
    const closed = new IsolatedVmSandbox();
    await closed.close();
    const error = await failure(closed.run(input('1')));
    expect((error as StepwireError).code).toBe('sandbox_closed');
    expect(error.message).toBe('the IsolatedVmSandbox is closed');
  });
});

describe('IsolatedVmSandbox in an engine', () => {
  it('runs a stored transform step over a sheet and writes its rows', async () => {
    const sheets = new MemorySpreadsheets({
      book: {
        orders: [['id', 'amount'], ...Array.from({ length: 1000 }, (_, i) => [String(i), String(i % 10)])],
        big: [['id', 'amount']],
      },
    });
    const engine = new Engine({ spreadsheets: sheets, sandbox });
    const at = (sheet_name: string) => ({ spreadsheet_id: 'book', sheet_name, origin: { row: 0, col: 0 } });
    for (const name of ['orders', 'big'])
      await engine.catalog.registerEntity({
        name,
        columns: [
          { name: 'id', type: 'NUMBER' },
          { name: 'amount', type: 'NUMBER' },
        ],
        primary_key: ['id'],
        spreadsheet_config: at(name),
      });
    await engine.scripts.put(
      'big.js',
      "writeEntity('big', getEntity('orders').filter((o) => o.amount >= 8));\nconsole.log('kept', 200);",
    );
    await engine.workflows.create({
      name: 'big-orders',
      steps: [
        {
          name: 'keep',
          type: 'atlas',
          atlas_data: {
            action: 'transform',
            input_data: { language: 'javascript', code_file: 'big.js' },
            input_entities: [{ name: 'orders' }],
            output_entities: [{ name: 'big', write_mode: 'replace' }],
          },
        },
      ],
      wires: [],
    });
    const run = await engine.run('big-orders');
    expect(run.status).toBe('succeeded');
    const read = { entity_name: 'big', operation: {}, page_size: 1000 };
    const rows = (await engine.catalog.getEntity(read)).body.table.rows;
    expect(rows).toHaveLength(200);
    expect(rows?.slice(0, 3)).toEqual([
      [8, 8],
      [9, 9],
      [18, 8],
    ]);
  });
});
