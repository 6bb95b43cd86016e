import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, type Workflow } from '../../src/index.js';

const outEntity = {
  name: 'out',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'v', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'x', sheet_name: 'out', origin: { row: 0, col: 0 } },
};

/** A transform over the workflow input's `t`, handed by reference, copying its rows to `out`. */
const workflow: Workflow = {
  name: 'copy_input',
  steps: [
    {
      name: 'copy',
      type: 'atlas',
      atlas_data: {
        action: 'transform',
        input_data: { language: 'javascript', code_file: 'copy.js' },
        input_entities: ['{{input.t}}'],
        output_entities: [{ name: 'out', write_mode: 'append' }],
      },
    },
  ],
  wires: [],
};

async function engineFor(kind: string) {
  const spreadsheets = new MemorySpreadsheets({ x: { out: [['id', 'v']] } });
  const engine = new Engine({ spreadsheets });
  await engine.catalog.registerEntity(outEntity);
  if (kind === 'trusted')
    engine.scripts.register('copy.js', ({ getEntity, writeEntity }) =>
      writeEntity('out', getEntity('input')),
    );
  else await engine.scripts.put('copy.js', `writeEntity('out', getEntity('input'));`);
  await engine.workflows.create(workflow);
  return { engine, spreadsheets };
}

describe.each(['trusted', 'sandboxed'])('a data table handed to a transform by reference (%s)', (kind) => {
  it('is read as it is when well formed (names or { name } columns, short rows padded with null)', async () => {
    const { engine, spreadsheets } = await engineFor(kind);
    const run = await engine.run('copy_input', {
      t: { columns: ['id', { name: 'v' }], rows: [[1, 'a'], [2]] },
    });
    expect(run.error).toBeNull();
    expect(spreadsheets.cells('x', 'out')).toEqual([
      ['id', 'v'],
      [1, 'a'],
      [2, null],
    ]);
  });

  it('refuses a column name given twice, naming the column, and writes nothing', async () => {
    const { engine, spreadsheets } = await engineFor(kind);
    const run = await engine.run('copy_input', {
      t: { columns: [{ name: 'id' }, { name: 'v' }, { name: 'v' }], rows: [[1, 'a', 'b']] },
    });
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'validation_failed', step: 'copy' });
    expect(run.error?.message).toContain('atlas_data.input_entities[0].columns[2]');
    expect(run.error?.message).toContain('the column "v" is given twice (columns[1] and columns[2])');
    expect(spreadsheets.cells('x', 'out')).toEqual([['id', 'v']]);
  });

  it('refuses a column without a name and rows that are no array or too long, naming each', async () => {
    const { engine } = await engineFor(kind);
    const run = await engine.run('copy_input', {
      t: { columns: [{ name: 'id' }, { type: 'STRING' }], rows: [[1, 'a'], 'oops', [1, 2, 3]] },
    });
    expect(run.status).toBe('failed');
    const message = run.error?.message ?? '';
    expect(message).toContain('atlas_data.input_entities[0].columns[1]: a column must be a non-empty name');
    expect(message).toContain('atlas_data.input_entities[0].rows[1]: a row of a data table must be an array');
    expect(message).toContain(
      'atlas_data.input_entities[0].rows[2]: the row has 3 cells but the table has 2 columns',
    );
  });
});
