import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import type { CliIo } from '../../src/cli/io.js';
import { ROOT, stepwire, tempDir } from './helpers.js';
import { byClass, parseXml } from '../pictures/xml.js';

const temp = tempDir('cli');
afterAll(() => temp.remove());

/** Runs the command line in this process, for the cheap cases (help texts, argument errors). */
async function inProcess(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), stopped: () => Promise.resolve() };
  const code = await runCli(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('stepwire as a process', () => {
  it('--help, --version and usage errors', async () => {
    const [help, version, none, unknown, missing] = await Promise.all([
      stepwire(['--help']),
      stepwire(['--version']),
      stepwire([]),
      stepwire(['frobnicate']),
      stepwire(['run', 'examples/invoices']),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: stepwire <command>/);
    for (const command of ['validate', 'run', 'serve', 'types', 'graph'])
      expect(help.stdout).toContain(`  ${command} <dir>`);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/missing command[\s\S]*Usage: stepwire/);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /stepwire run: missing arguments[\s\S]*Usage: stepwire run <dir> <workflow>/,
    );
    expect(missing.stdout).toBe('');
  });

  it('validate: ok exits 0; broken files list every problem with file and path and exit 1', async () => {
    const broken = join(temp.dir, 'broken');
    cpSync(join(ROOT, 'examples/invoices'), broken, { recursive: true });
    writeFileSync(
      join(broken, 'relationships/orders_customer.json'),
      JSON.stringify({
        name: 'orders_customer',
        relationship_type: 'foreign_key',
        source_entity: 'orders',
        target_entity: 'clients',
        foreign_key_config: {
          source_columns: ['customer_id'],
          target_columns: ['id'],
          enforce_foreign_key: true,
        },
      }),
    );
    const workflow = JSON.parse(readFileSync(join(broken, 'workflows/invoice.json'), 'utf8'));
    workflow.workflow_output.output_data.file_url = '{{uplaod.file_url}}';
    writeFileSync(join(broken, 'workflows/invoice.json'), JSON.stringify(workflow, null, 2));
    writeFileSync(join(broken, 'entities/extra.json'), '{ "name": "extra", }');

    const [ok, bad] = await Promise.all([
      stepwire(['validate', 'examples/invoices']),
      stepwire(['validate', broken]),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(
      'examples/invoices is valid: 3 entities, 1 relationship, 1 script, 5 workflows, 0 applications, 2 triggers',
    );
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/has 5 problems:/);
    expect(bad.stdout).toMatch(
      /^ {2}entities\/extra\.json: invalid JSON at line 1, column 20: unexpected "}"/m,
    );
    expect(bad.stdout).toMatch(/^ {2}relationships\/orders_customer\.json: .*clients/m);
    // The customers' order_total rolls up over that relationship, which was not stored.
    expect(bad.stdout).toMatch(
      /^ {2}entities\/customers\.json: columns\[4\]\.rollup\.relationship: .*orders_customer/m,
    );
    expect(bad.stdout).toMatch(
      /^ {2}workflows\/invoice\.json: workflow_output\.output_data(\.file_url)?: .*uplaod/m,
    );
    // The weekly trigger names the broken workflow, which was not stored.
    expect(bad.stdout).toMatch(
      /^ {2}triggers\/weekly_invoice\.json: workflow_name: workflow "invoice" does not exist/m,
    );
  });

  it('run: a failing run prints the failed step and exits 1; bad input is refused', async () => {
    const out = join(temp.dir, 'out-fail');
    const [failed, invalid, unknown] = await Promise.all([
      stepwire(['run', 'examples/invoices', 'invoice', '--input', '{"customer_id":99}', '--out', out]),
      stepwire(['run', 'examples/invoices', 'invoice', '--input', '{"customer_id":"one"}']),
      stepwire(['run', 'examples/invoices', 'invoices']),
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/✓ customer +\d+(\.\d)? m?s/);
    expect(failed.stderr).toMatch(/✗ pdf +failed: .*customer\.body\.table\.rows\[0\]/);
    expect(failed.stderr).toMatch(/✗ run failed: /);
    // The timeline at the end: a bar per step on one scale, the error under the failed one.
    expect(failed.stderr).toMatch(/^timeline of run [\w-]+: failed in \d+(\.\d)? m?s$/m);
    expect(failed.stderr).toMatch(/^ {2}customer +█+ +succeeded · \d+(\.\d)? m?s$/m);
    expect(failed.stderr).toMatch(/^ {2}pdf +█+ +failed · \d+(\.\d)? m?s\n +✗ step "pdf" failed: /m);
    expect(failed.stdout).toBe('');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/input of workflow "invoice" is invalid:\n {2}customer_id: /);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      'there is no workflow "invoices" in examples/invoices (workflows: invoice, open_invoice, open_invoices, order_added, send_invoice)',
    );
  });

  it('run --sandbox isolated-vm: the transform runs in V8 isolates with the output QuickJS gives', async () => {
    const [quickjs, isolates] = await Promise.all(
      ['quickjs', 'isolated-vm'].map((sandbox) => {
        const dir = join(temp.dir, `summary-${sandbox}`);
        cpSync(join(ROOT, 'examples/summary'), dir, { recursive: true });
        return stepwire(['run', dir, 'summarize_orders', '--sandbox', sandbox]);
      }),
    );
    expect(quickjs!.code, quickjs!.stderr).toBe(0);
    expect(isolates!.code, isolates!.stderr).toBe(0);
    const output = JSON.parse(isolates!.stdout) as { rows_written: number; totals: { rows: unknown[] } };
    expect(output.rows_written).toBeGreaterThan(0);
    expect(output.totals.rows).toHaveLength(output.rows_written);
    expect(isolates!.stdout).toBe(quickjs!.stdout);
  });

  it('types: input and output interfaces of each workflow', async () => {
    const file = join(temp.dir, 'workflows.d.ts');
    const [toFile, toStdout] = await Promise.all([
      stepwire(['types', 'examples/summary', '--out', file]),
      stepwire(['types', 'examples/invoices']),
    ]);
    expect(toFile.code).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('export interface SummarizeOrdersInput');
    expect(text).toMatch(
      /export interface SummarizeOrdersOutput \{\s+rows_written: unknown;\s+totals: unknown;\s+\}/,
    );
    expect(toStdout.code).toBe(0);
    expect(toStdout.stdout).toMatch(
      /export interface InvoiceInput \{\s+customer_id: number;\s+\/\*\*\s+\* Date printed on the invoice \(YYYY-MM-DD\)\s+\*\/\s+invoice_date\?: string;\s+\}/,
    );
    expect(toStdout.stdout).toMatch(
      /export interface InvoiceOutput \{\s+file_url: string;\s+customer_name: unknown;\s+order_count: number;\s+\}/,
    );
    expect(toStdout.stdout).toContain('"invoice": { input: InvoiceInput; output: InvoiceOutput };');
    // A for_each step's counts are numbers.
    expect(toStdout.stdout).toMatch(
      /export interface OpenInvoicesOutput \{\s+made: number;\s+failed: number;\s+invoices: unknown;\s+\}/,
    );
  });
});

describe('stepwire in this process (cheap cases)', () => {
  it('--help on every command prints its usage and exits 0', async () => {
    for (const command of ['validate', 'run', 'serve', 'worker', 'types', 'graph']) {
      const result = await inProcess([command, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: stepwire ${command} <dir>`));
    }
    expect((await inProcess(['help', 'run'])).stdout).toMatch(/^Usage: stepwire run/);
  });

  it('serve --public-url that is no http(s) address for clients is a usage error naming --public-url', async () => {
    for (const url of [
      'ftp://flows.example.test',
      'https://flows.example.test/?x=1',
      'http://0.0.0.0:8787',
      'flows',
    ]) {
      const result = await inProcess(['serve', 'examples/invoices', '--memory', '--public-url', url]);
      expect(result.code, url).toBe(2);
      expect(result.stderr).toMatch(/^stepwire serve: --public-url /);
      expect(result.stdout).toBe('');
    }
  });

  it('graph: the workflow as SVG on standard output or into a file; an unknown workflow exits 1', async () => {
    const file = join(temp.dir, 'graph.svg');
    const [toStdout, toFile, unknown] = [
      await inProcess(['graph', 'examples/invoices', 'invoice']),
      await inProcess(['graph', 'examples/invoices', 'invoice', '--out', file]),
      await inProcess(['graph', 'examples/invoices', 'invoices']),
    ];
    expect(toStdout.code).toBe(0);
    const svg = parseXml(toStdout.stdout);
    expect(byClass(svg, 'g', 'step').length).toBe(6);
    expect(toFile.code).toBe(0);
    expect(toFile.stderr).toBe(`wrote ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(`${toStdout.stdout}\n`);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      'there is no workflow "invoices" in examples/invoices (workflows: invoice, open_invoice, open_invoices, order_added, send_invoice)',
    );
  });

  it('usage errors exit 2 with the message and the help of the command', async () => {
    const cases: [string[], RegExp][] = [
      [['run', 'examples/invoices', 'invoice', '--input', '{customer_id:1}'], /--input is not valid JSON/],
      [['run', 'examples/invoices', 'invoice', '--inputs', '{}'], /Unknown option '--inputs'/],
      [['serve', 'examples/app', '--port', 'eighty'], /--port must be a whole number/],
      [
        ['run', 'examples/summary', 'summarize_orders', '--sandbox', 'v8'],
        /--sandbox must be "quickjs" or "isolated-vm", got "v8"/,
      ],
      [
        ['worker', 'examples/summary', '--sandbox', ''],
        /--sandbox must be "quickjs" or "isolated-vm", got ""/,
      ],
      [['validate', 'a', 'b'], /unexpected argument "b"/],
      [['types'], /missing arguments/],
      [['graph', 'examples/invoices'], /missing arguments/],
    ];
    for (const [argv, message] of cases) {
      const result = await inProcess(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(new RegExp(`Usage: stepwire ${argv[0]}`));
    }
  });
});
