import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  WriteRejectedError,
  workflow,
  writeEntity,
  type Workflow,
} from '../../src/index.js';
import { shopEngine } from './helpers.js';

const ada2 = { id: 4, name: 'Ada II', city: 'Paris' };

async function rejection(promise: Promise<unknown>): Promise<WriteRejectedError> {
  const error = await promise.then(
    () => expect.fail('expected the write to be rejected'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WriteRejectedError);
  return error as WriteRejectedError;
}

describe('an append delivered again (it carries an idempotency key)', () => {
  it('counts rows already there with the same key and values as written, and appends nothing', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const write = [{ entity: 'customers', rows: [ada2], mode: 'append' as const }];
    expect(await engine.catalog.write(write, { idempotencyKey: 'run-1:add' })).toEqual({
      written: { customers: 1 },
    });
    const after = spreadsheets.cells('shop', 'customers');
    engine.catalog.invalidate(); // as in another process: the rows come from the sheet
    expect(await engine.catalog.write(write, { idempotencyKey: 'run-1:add' })).toEqual({
      written: { customers: 1 },
    });
    expect(spreadsheets.cells('shop', 'customers')).toEqual(after);
    expect(after!.filter((row) => row[0] === 4)).toHaveLength(1);
  });

  it('appends the rows not there yet and counts the ones that are', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const five = { id: 5, name: 'Alan', city: 'Manchester' };
    await engine.catalog.write([{ entity: 'customers', rows: [ada2] }], { idempotencyKey: 'k' });
    const result = await engine.catalog.write([{ entity: 'customers', rows: [ada2, five] }], {
      idempotencyKey: 'k',
    });
    expect(result).toEqual({ written: { customers: 2 } });
    expect(spreadsheets.cells('shop', 'customers')!.map((row) => row[0])).toEqual(['id', 1, 2, 3, 4, 5]);
  });

  it('still rejects a key that is there with other values, naming the existing row; nothing is written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'customers');
    const error = await rejection(
      engine.catalog.write([{ entity: 'customers', rows: [{ id: 1, name: 'Ada', city: 'Paris' }] }], {
        idempotencyKey: 'run-2:add',
      }),
    );
    expect(error.code).toBe('write_conflict');
    expect(error.issues).toEqual([
      expect.objectContaining({
        code: 'duplicate_key',
        message: expect.stringMatching(/of row 2 of sheet "[^"]+"$/),
      }),
    ]);
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });

  it('still rejects a row that is there when the write has no key', async () => {
    const { engine } = await shopEngine();
    const error = await rejection(
      engine.catalog.append('customers', [{ id: 1, name: 'Ada', city: 'London' }]),
    );
    expect(error.issues[0]).toMatchObject({ code: 'duplicate_key' });
  });

  it('still rejects a key repeated inside the write', async () => {
    const { engine } = await shopEngine();
    const same = { id: 1, name: 'Ada', city: 'London' };
    const error = await rejection(
      engine.catalog.write([{ entity: 'customers', rows: [same, same] }], { idempotencyKey: 'k' }),
    );
    expect(error.issues).toEqual([
      expect.objectContaining({
        path: 'customers[1]',
        message: expect.stringMatching(/row 1 of this write/),
      }),
    ]);
  });

  it('compares typed values as read back: dates, booleans and empty cells', async () => {
    const spreadsheets = new MemorySpreadsheets({
      log: {
        events: [
          ['id', 'day', 'done', 'note'],
          [1, '2026-03-01', true, null],
        ],
      },
    });
    const engine = new Engine({ spreadsheets });
    await engine.catalog.registerEntity({
      name: 'events',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'day', type: 'DATE' },
        { name: 'done', type: 'BOOLEAN' },
        { name: 'note', type: 'STRING' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 'log', sheet_name: 'events', origin: { row: 0, col: 0 } },
    });
    const row = { id: 1, day: '2026-03-01', done: 'TRUE', note: '' };
    const result = await engine.catalog.write([{ entity: 'events', rows: [row] }], { idempotencyKey: 'k' });
    expect(result).toEqual({ written: { events: 1 } });
    expect(spreadsheets.cells('log', 'events')).toHaveLength(2);
  });
});

describe('write_entity append steps', () => {
  const addCustomer: Workflow = workflow('add_customer')
    .input({ schema: { type: 'object', properties: { city: { type: 'string' } } } })
    .step('add', writeEntity('customers', 'append', [{ id: 4, name: 'Ada II', city: '{{input.city}}' }]))
    .output({ data: { written: '{{add.written}}' } })
    .build() as Workflow;

  it('succeed again for rows already there with the same values, and write them once', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await engine.workflows.create(addCustomer);
    const first = await engine.run('add_customer', { city: 'Paris' });
    const again = await engine.run('add_customer', { city: 'Paris' });
    expect(first.output).toEqual({ written: 1 });
    expect(again.status, JSON.stringify(again.error)).toBe('succeeded');
    expect(again.output).toEqual({ written: 1 });
    expect(spreadsheets.cells('shop', 'customers')!.filter((row) => row[0] === 4)).toEqual([
      [4, 'Ada II', 'Paris'],
    ]);
  });

  it('fail with write_conflict when the key is there with other values', async () => {
    const { engine } = await shopEngine();
    await engine.workflows.create(addCustomer);
    await engine.run('add_customer', { city: 'Paris' });
    const other = await engine.run('add_customer', { city: 'Rome' });
    expect(other.status).toBe('failed');
    expect(other.error).toMatchObject({ code: 'write_conflict', step: 'add' });
  });
});

describe('transform append outputs (they carry the step idempotency key too)', () => {
  const addByScript: Workflow = {
    name: 'add_by_script',
    steps: [
      {
        name: 'add',
        type: 'atlas',
        atlas_data: {
          action: 'transform',
          input_data: { code_file: 'add_customer' },
          input_entities: ['customers'],
          output_entities: [{ name: 'customers', write_mode: 'append' }],
        },
      },
    ],
    wires: [],
  };

  async function engineAdding(city: { value: string }) {
    const shop = await shopEngine();
    shop.engine.scripts.register('add_customer', (context) =>
      context.writeEntity('customers', [{ id: 4, name: 'Ada II', city: city.value }]),
    );
    await shop.engine.workflows.create(addByScript);
    return shop;
  }

  it('succeed again for rows already there with the same values, and write them once', async () => {
    const city = { value: 'Paris' };
    const { engine, spreadsheets } = await engineAdding(city);
    const first = await engine.run('add_by_script');
    const again = await engine.run('add_by_script');
    expect(first.output).toEqual({ add: { written: { customers: 1 } } });
    expect(again.status, JSON.stringify(again.error)).toBe('succeeded');
    expect(again.output).toEqual({ add: { written: { customers: 1 } } });
    expect(spreadsheets.cells('shop', 'customers')!.filter((row) => row[0] === 4)).toEqual([
      [4, 'Ada II', 'Paris'],
    ]);
  });

  it('fail with write_conflict when the key is there with other values', async () => {
    const city = { value: 'Paris' };
    const { engine } = await engineAdding(city);
    await engine.run('add_by_script');
    city.value = 'Rome';
    const other = await engine.run('add_by_script');
    expect(other.status).toBe('failed');
    expect(other.error).toMatchObject({ code: 'write_conflict', step: 'add' });
  });
});
