import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import type { CliIo } from '../../src/cli/io.js';
import { tempDir } from './helpers.js';

const temp = tempDir('cli-names');
afterAll(() => temp.remove());

/** Runs the command line in this process. */
async function inProcess(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), stopped: () => Promise.resolve() };
  const code = await runCli(argv, io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n'), all: [...out, ...err].join('\n') };
}

/** A project folder of `files` (path -> JSON value or text). */
function project(name: string, files: Record<string, unknown>): string {
  const dir = join(temp.dir, name);
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), typeof body === 'string' ? body : JSON.stringify(body));
  }
  return dir;
}

const dummy = (step: string) => ({
  name: step,
  type: 'l2',
  l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
});

describe('project files that clash or cannot be read as definitions', () => {
  it('two files defining the same workflow, trigger or entity name: the second is a problem naming both', async () => {
    const entity = {
      name: 'people',
      primary_key: ['id'],
      columns: [{ name: 'id', type: 'NUMBER' }],
      spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'people', origin: { row: 0, col: 0 } },
    };
    const dir = project('clash', {
      'workflows/a.json': { name: 'echo', steps: [dummy('first')], wires: [] },
      'workflows/b.json': { name: 'echo', steps: [dummy('second')], wires: [] },
      // Named by its file: the same name as a.json's.
      'workflows/echo.json': { steps: [dummy('third')], wires: [] },
      'triggers/t1.json': { name: 't', type: 'webhook', workflow_name: 'echo' },
      'triggers/t2.json': {
        name: 't',
        type: 'schedule',
        workflow_name: 'echo',
        schedule_data: { cron: '0 0 * * *' },
      },
      'entities/people.json': entity,
      'entities/persons.json': { ...entity, columns: [{ name: 'id', type: 'STRING' }] },
    });
    const result = await inProcess(['validate', dir]);
    expect(result.code).toBe(1);
    expect(result.all).toContain(
      'entities/persons.json: entity "people" is defined in entities/people.json already; each entity is defined by one file',
    );
    expect(result.all).toContain(
      'workflows/b.json: workflow "echo" is defined in workflows/a.json already; each workflow is defined by one file',
    );
    expect(result.all).toContain(
      'workflows/echo.json: workflow "echo" is defined in workflows/a.json already',
    );
    expect(result.all).toContain(
      'triggers/t2.json: trigger "t" is defined in triggers/t1.json already; each trigger is defined by one file',
    );
  });

  it('a trigger file holding null, and a workflow nested 2,000 levels deep, are problems of their file', async () => {
    const deep = `{"steps":[{"name":"d","type":"l2","l2_data":{"provider":"platform","module":"dummy","action":"dummy_task","input_data":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}}],"wires":[]}`;
    const dir = project('odd', {
      'workflows/echo.json': { steps: [dummy('d')], wires: [] },
      'workflows/deep.json': deep,
      'triggers/t.json': 'null',
    });
    const result = await inProcess(['validate', dir]);
    expect(result.code).toBe(1);
    expect(result.all).not.toContain('unexpected error');
    expect(result.all).toContain('triggers/t.json: value must be an object, got null');
    expect(result.all).toContain(
      'workflows/deep.json: steps[0].l2_data.input_data: input_data is nested more than 512 levels deep',
    );
  });

  it('types: workflows whose names make the same type name get numbered interfaces', async () => {
    const withInput = (name: string, type: string) => ({
      name,
      steps: [dummy('d')],
      wires: [],
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { a: { type } }, required: ['a'] },
      },
    });
    const dir = project('types', {
      'workflows/order-sum.json': withInput('order-sum', 'string'),
      'workflows/order_sum.json': withInput('order_sum', 'number'),
    });
    const result = await inProcess(['types', dir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/export interface OrderSumInput \{\s+a: string;\s+\}/);
    expect(result.stdout).toMatch(/export interface OrderSum2Input \{\s+a: number;\s+\}/);
    expect(result.stdout).toContain('"order-sum": { input: OrderSumInput; output: OrderSumOutput };');
    expect(result.stdout).toContain('"order_sum": { input: OrderSum2Input; output: OrderSum2Output };');
  });

  it('types: an input property default_data fills is optional', async () => {
    const dir = project('defaults', {
      'workflows/report.json': {
        steps: [dummy('d')],
        wires: [],
        workflow_input: {
          name: 'input',
          input_schema: {
            type: 'object',
            properties: { min_amount: { type: 'number' }, region: { type: 'string' } },
            required: ['min_amount', 'region'],
          },
          default_data: { min_amount: 0 },
        },
      },
    });
    const result = await inProcess(['types', dir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /export interface ReportInput \{\s+min_amount\?: number;\s+region: string;\s+\}/,
    );
  });
});
