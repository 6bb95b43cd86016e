import { describe, expect, it } from 'vitest';
import { LimitError, ScriptError } from '../../src/errors/index.js';
import { logsOf } from '../../src/script/outcome.js';
import { bothSandboxes, failure, input } from './helpers.js';

const sandboxes = bothSandboxes();

describe.each(sandboxes)('%s', (_name, sandbox) => {
  it('aggregates rows with group by and sum', async () => {
    const result = await sandbox.run(
      input(`const sums = {};
for (const row of getEntity('orders')) sums[row.region] = (sums[row.region] ?? 0) + row.amount;
writeEntity('totals', Object.keys(sums).map((region) => ({ region, total: sums[region] })));`),
    );
    expect(result.writes).toEqual({
      totals: [
        { region: 'eu', total: 17 },
        { region: 'us', total: 5 },
        { region: 'apac', total: 1 },
      ],
    });
  });

  it('accepts a data table and object rows, accumulating calls', async () => {
    const result = await sandbox.run(
      input(`writeEntity('totals', [{ region: 'eu', total: 1 }]);
writeEntity('totals', { columns: [{ name: 'region' }, { name: 'total' }], rows: [['us', 2], ['apac']] });`),
    );
    expect(result.writes['totals']).toEqual([
      { region: 'eu', total: 1 },
      { region: 'us', total: 2 },
      { region: 'apac', total: null },
    ]);
  });

  it('refuses entities that are not inputs or outputs of the step, naming the declared ones', async () => {
    const read = await failure(sandbox.run(input(`\ngetEntity('customers')`)));
    expect(read).toBeInstanceOf(ScriptError);
    expect(read.message).toBe('line 2: Error: entity customers is not an input of this step; inputs: orders');
    const write = await failure(sandbox.run(input(`writeEntity('orders', [])`)));
    expect(write.message).toContain('entity orders is not an output of this step; outputs: totals');
  });

  it('captures console output as log lines', async () => {
    const result = await sandbox.run(
      input(`console.log('rows', getEntity('orders').length, { a: 1 });\nconsole.warn('careful')`),
    );
    expect(result.logs).toEqual(['rows 4 {"a":1}', '[warn] careful']);
  });

  it('caps the logs', async () => {
    const result = await sandbox.run(
      input(`for (let i = 0; i < 1000; i++) console.log('x'.repeat(100))`, { maxLogBytes: 1000 }),
    );
    expect(result.logs.join('').length).toBeLessThan(1100);
    expect(result.logs.at(-1)).toBe('[logs truncated at 1000 characters]');
  });

  it('reports a thrown error with its message and line', async () => {
    const error = await failure(
      sandbox.run(
        input(
          `const rows = getEntity('orders');\n\nfunction check() {\n  throw new Error('no rows for ' + rows.length)\n}\ncheck()`,
        ),
      ),
    );
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as ScriptError).line).toBe(4);
    expect(error.message).toBe('line 4: Error: no rows for 4');
  });

  it('keeps the lines logged before a failure with the error, also past a time limit', async () => {
    const thrown = await failure(sandbox.run(input(`console.log('one');\nconsole.log('two');\nnull.x;`)));
    expect(thrown).toBeInstanceOf(ScriptError);
    expect(logsOf(thrown)).toEqual(['one', 'two']);
    const late = await failure(
      sandbox.run({
        ...input(`console.log('looping');\nwhile (true) {}`),
        limits: { ...input('').limits, timeoutMs: 200 },
      }),
    );
    expect(late).toBeInstanceOf(LimitError);
    expect(logsOf(late)).toEqual(['looping']);
  });

  it('cuts a huge error name or message, which goes into the run record', async () => {
    const error = await failure(
      sandbox.run(
        input(`const e = new Error('m'.repeat(8 << 20));\ne.name = 'N'.repeat(1 << 20);\nthrow e;`),
      ),
    );
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toMatch(/^line 1: N{100}…: m{2000}…$/);
  });

  it('reports a syntax error with its line', async () => {
    const error = await failure(sandbox.run(input(`const a = 1;\nconst b = ;\n`)));
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as ScriptError).line).toBe(2);
    expect(error.message).toMatch(/SyntaxError/);
  });

  it('stops an infinite loop at the time limit', async () => {
    const started = Date.now();
    const error = await failure(sandbox.run(input('while (true) {}', { timeoutMs: 300 })));
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).limit).toBe('script.timeout');
    expect(error.message).toBe('script exceeded its time limit of 300 ms');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('stops a memory bomb at the memory limit', async () => {
    const error = await failure(
      sandbox.run(
        input("let a = []; while (1) a.push('x'.repeat(1e6) + a.length)", {
          memoryBytes: 16 * 1024 * 1024,
          timeoutMs: 20_000,
        }),
      ),
    );
    expect((error as LimitError).limit).toBe('script.memory');
    expect(error.message).toBe('script exceeded its memory limit of 16 MiB');
  });

  it('stops deep recursion at the stack limit', async () => {
    const error = await failure(sandbox.run(input('function down(n) { return down(n + 1) + 1 }\ndown(0)')));
    expect((error as LimitError).limit).toBe('script.stack');
  });

  it('fails a script whose promise jobs outlive the time limit', async () => {
    const error = await failure(
      sandbox.run(input('(async () => { for (;;) await null; })();', { timeoutMs: 300 })),
    );
    expect((error as LimitError).limit).toBe('script.timeout');
    expect(error.message).toBe('script exceeded its time limit of 300 ms');
  });

  it('fails a script whose dropped promise loops past the time limit', async () => {
    const error = await failure(
      sandbox.run(
        input("Promise.resolve().then(() => { for (;;) {} }); writeEntity('totals', [])", { timeoutMs: 300 }),
      ),
    );
    expect((error as LimitError).limit).toBe('script.timeout');
  });

  it('stops a memory bomb inside an async function at the memory limit', async () => {
    const error = await failure(
      sandbox.run(
        input("(async () => { await null; const a = []; for (;;) a.push('x'.repeat(1e5) + a.length); })();", {
          memoryBytes: 16 * 1024 * 1024,
          timeoutMs: 20_000,
        }),
      ),
    );
    expect((error as LimitError).limit).toBe('script.memory');
  });

  it('stops deep recursion inside an async function at the stack limit', async () => {
    const error = await failure(
      sandbox.run(input('(async () => { await null; const down = (n) => down(n + 1) + 1; down(0); })();')),
    );
    expect((error as LimitError).limit).toBe('script.stack');
  });

  it('fails the run when the promise the script ends with rejects, and writes nothing', async () => {
    const error = await failure(
      sandbox.run(
        input(
          "(async () => { writeEntity('totals', [{ region: 'x' }]); await null; throw new Error('late'); })();",
        ),
      ),
    );
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toContain('late');
  });

  it('waits for the promise the script ends with', async () => {
    const result = await sandbox.run(
      input("async function main() { await null; writeEntity('totals', [{ region: 'late' }]); }\nmain();"),
    );
    expect(result.writes).toEqual({ totals: [{ region: 'late' }] });
  });

  it('stops huge output at the output limit', async () => {
    const error = await failure(
      sandbox.run(
        input("while (true) writeEntity('totals', [{ region: 'x'.repeat(10000) }])", {
          maxOutputBytes: 100_000,
        }),
      ),
    );
    expect((error as LimitError).limit).toBe('script.output');
  });

  it('stops at the output limit even when the script catches the error', async () => {
    const error = await failure(
      sandbox.run(
        input("try { writeEntity('totals', [{ region: 'x'.repeat(1000) }]) } catch (e) {}", {
          maxOutputBytes: 100,
        }),
      ),
    );
    expect((error as LimitError).limit).toBe('script.output');
  });

  it('keeps nothing between runs', async () => {
    await sandbox.run(input('globalThis.leaked = 42; Object.prototype.polluted = 1;'));
    const result = await sandbox.run(input('console.log(typeof leaked, typeof ({}).polluted)'));
    expect(result.logs).toEqual(['undefined undefined']);
  });

  it('still works after a run that hit a limit', async () => {
    await failure(sandbox.run(input('function down(n) { return down(n + 1) + 1 }\ndown(0)')));
    const result = await sandbox.run(input("writeEntity('totals', [{ ok: true }])"));
    expect(result.writes['totals']).toEqual([{ ok: true }]);
  });

  it('goes on after large runs, each on a fresh instance, with nothing left of the one before', async () => {
    const n = 120_000;
    const big = {
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'amount', type: 'NUMBER' },
      ],
      rows: Array.from({ length: n }, (_, i) => [i, i % 10]),
    };
    const large = (extra: string) => ({
      ...input(`${extra}
        const out = [];
        for (const r of getEntity('orders')) if (r.amount > 7) out.push({ id: r.id, twice: r.amount * 2 });
        writeEntity('totals', out);`),
      inputs: { orders: big },
    });
    for (let round = 0; round < 3; round++) {
      const result = await sandbox.run(large(round === 0 ? 'globalThis.leaked = 1;' : ''));
      expect(result.writes['totals']).toHaveLength((n / 10) * 2);
      expect(result.writes['totals']![1]).toEqual({ id: 9, twice: 18 });
      const small = await sandbox.run(input('console.log(typeof leaked, getEntity("orders").length)'));
      expect(small.logs).toEqual(['undefined 4']);
    }
  });
});
