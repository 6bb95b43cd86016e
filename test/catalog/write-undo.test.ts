import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  UpstreamError,
  ValidationError,
  type AppendRequest,
  type SpreadsheetAdapter,
} from '../../src/index.js';

const entity = (name: string) => ({
  name,
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'label', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: name, origin: { row: 0, col: 0 } },
});

/** The memory adapter, but appends to one sheet fail as a spreadsheet service's outage would. */
function failingOn(sheet: string, memory: MemorySpreadsheets, withWrite = true): SpreadsheetAdapter {
  const adapter: SpreadsheetAdapter = {
    read: (ranges) => memory.read(ranges),
    append: (request: AppendRequest) => {
      if (request.sheet_name === sheet)
        throw new UpstreamError(`the service lost the append to ${sheet}`, 503);
      return memory.append(request);
    },
  };
  if (withWrite) adapter.write = (request) => memory.write(request);
  return adapter;
}

function seeded(): MemorySpreadsheets {
  return new MemorySpreadsheets({
    book: {
      first: [['id', 'label', 'note'], [1, 'one', '=kept'], [], ['total', null, 'below the data']],
      second: [
        ['id', 'label'],
        [1, 'uno'],
      ],
    },
  });
}

async function engineOn(adapter: SpreadsheetAdapter): Promise<Engine> {
  const engine = new Engine({ spreadsheets: adapter });
  await engine.catalog.registerEntity(entity('first'));
  await engine.catalog.registerEntity(entity('second'));
  return engine;
}

describe('a write to several entities', () => {
  it('takes back the rows of the first entity when the second fails', async () => {
    const memory = seeded();
    const before = structuredClone(memory.cells('book', 'first')!);
    const engine = await engineOn(failingOn('second', memory));
    const error = await engine.catalog
      .write([
        { entity: 'first', rows: [{ id: 2, label: 'two' }] },
        { entity: 'second', rows: [{ id: 2, label: 'dos' }] },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    const read = await engine.catalog.getEntity({ entity_name: 'first', operation: {} });
    expect(read.body.table.rows).toEqual([[1, 'one']]);
    // Cells outside the entity's rows are as they were; the taken-back row is blank.
    const after = memory.cells('book', 'first')!;
    expect(after[1]).toEqual(before[1]);
    expect(after.flat().filter((v) => v !== null && v !== undefined)).toEqual(
      before.flat().filter((v) => v !== null && v !== undefined),
    );
  });

  it('puts a replaced entity back as it was when a later entity fails', async () => {
    const memory = seeded();
    const engine = await engineOn(failingOn('second', memory));
    const error = await engine.catalog
      .write([
        { entity: 'first', rows: [{ id: 7, label: 'seven' }], mode: 'replace' },
        { entity: 'second', rows: [{ id: 2, label: 'dos' }] },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(memory.cells('book', 'first')![1]).toEqual([1, 'one', '=kept']);
    const read = await engine.catalog.getEntity({ entity_name: 'first', operation: {} });
    expect(read.body.table.rows).toEqual([[1, 'one']]);
  });

  it('does the same for a transform step with two output entities', async () => {
    const memory = seeded();
    const engine = await engineOn(failingOn('second', memory));
    engine.scripts.register('both', (t) => {
      t.writeEntity('first', [{ id: 3, label: 'three' }]);
      t.writeEntity('second', [{ id: 3, label: 'tres' }]);
    });
    await engine.workflows.create({
      name: 'split',
      steps: [
        {
          name: 'write',
          type: 'atlas',
          atlas_data: {
            action: 'transform',
            input_data: { language: 'javascript', code_file: 'both' },
            input_entities: [],
            output_entities: [
              { name: 'first', write_mode: 'append' },
              { name: 'second', write_mode: 'append' },
            ],
          },
        },
      ],
      wires: [],
    });
    const run = await engine.run('split');
    expect(run.status).toBe('failed');
    expect(run.error?.step).toBe('write');
    const read = await engine.catalog.getEntity({ entity_name: 'first', operation: {} });
    expect(read.body.table.rows).toEqual([[1, 'one']]);
  });

  it('is refused before anything is written when the adapter cannot overwrite cells', async () => {
    const memory = seeded();
    const engine = await engineOn(failingOn('nothing', memory, false));
    const error = await engine.catalog
      .write([
        { entity: 'first', rows: [{ id: 2, label: 'two' }] },
        { entity: 'second', rows: [{ id: 2, label: 'dos' }] },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]).toMatchObject({ code: 'unsupported', path: 'writes' });
    expect(memory.cells('book', 'first')).toHaveLength(4);
    expect(memory.cells('book', 'second')).toHaveLength(2);
    // One entity at a time still works on such an adapter.
    await expect(engine.catalog.append('first', [{ id: 2, label: 'two' }])).resolves.toEqual({ written: 1 });
  });
});

describe('a write whose rows landed but whose sheet revision cannot be read afterwards', () => {
  /** The memory adapter, but asking a sheet's revision fails once `failing` is set (after the append). */
  function revisionFailsAfterAppend(memory: MemorySpreadsheets): SpreadsheetAdapter {
    let failing = false;
    return {
      read: (ranges) => memory.read(ranges),
      append: (request: AppendRequest) => {
        memory.append(request);
        failing = true;
      },
      write: (request) => memory.write(request),
      update: (request) => memory.update(request),
      revision: (sheet) => {
        if (failing) throw new UpstreamError('the service did not answer', 503);
        return memory.revision(sheet);
      },
    };
  }

  it('still resolves to { written }: the rows are in the sheet, so the write is not reported as failed', async () => {
    const memory = seeded();
    const engine = await engineOn(revisionFailsAfterAppend(memory));
    expect(await engine.catalog.append('second', [{ id: 2, label: 'dos' }])).toEqual({ written: 1 });
    expect(memory.cells('book', 'second')).toEqual([
      ['id', 'label'],
      [1, 'uno'],
      [2, 'dos'],
    ]);
  });

  it('leaves no entity half-written in a write to several entities', async () => {
    const memory = seeded();
    const engine = await engineOn(revisionFailsAfterAppend(memory));
    const outcome = await engine.catalog
      .write([
        { entity: 'second', rows: [{ id: 2, label: 'dos' }] },
        { entity: 'first', rows: [{ id: 2, label: 'two' }] },
      ])
      .catch((e: unknown) => e);
    const rows = (cells: unknown[][]) => cells.filter((row) => row[0] === 2).length;
    // Either both entities hold the new row, or neither does.
    const held = [rows(memory.cells('book', 'second')!), rows(memory.cells('book', 'first')!)];
    expect(held[0]).toBe(held[1]);
    expect(outcome).toEqual({ written: { second: 1, first: 1 } });
  });
});
