import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, WriteRejectedError } from '../../src/index.js';
import { shopEngine } from '../engine/helpers.js';

async function rejected(promise: Promise<unknown>): Promise<WriteRejectedError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(WriteRejectedError);
  return error as WriteRejectedError;
}

describe('write checks', () => {
  it('names where a repeated key was first seen: a sheet row, a row of this write, an earlier part', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'customers');
    const error = await rejected(
      engine.catalog.write([
        {
          entity: 'customers',
          rows: [
            { id: 4, name: 'Alan', city: 'Wilmslow' },
            { id: 1, name: 'Ada again', city: 'London' },
            { id: 4, name: 'Alan again', city: 'Bletchley' },
            { id: 5, name: 'Barbara', city: 'Boston' },
            { id: '5', name: 'Barbara as text', city: 'Boston' },
          ],
        },
        { entity: 'customers', rows: [{ id: 4, name: 'Alan thrice', city: 'Manchester' }] },
      ]),
    );
    expect(error.issues.map((issue) => issue.message)).toEqual([
      'row 2 of "customers" repeats primary key (id=1) of row 2 of sheet "customers"',
      'row 3 of "customers" repeats primary key (id=4) of row 1 of this write',
      'row 5 of "customers" repeats primary key (id=5) of row 4 of this write',
      'row 1 of "customers" repeats primary key (id=4) of an earlier row of this write',
    ]);
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });

  it('reads object rows whatever their key order, and reports every problem of a row', async () => {
    const { engine, spreadsheets } = await shopEngine();
    await engine.catalog.write([
      {
        entity: 'customers',
        rows: [
          { id: 4, name: 'Alan', city: 'Wilmslow' },
          { city: 'Boston', id: 5, name: 'Barbara' },
          { name: 'Edsger', id: 6 },
          [7, 'Grace', 'Arlington'],
        ],
      },
    ]);
    expect(spreadsheets.cells('shop', 'customers')?.slice(4)).toEqual([
      [4, 'Alan', 'Wilmslow'],
      [5, 'Barbara', 'Boston'],
      [6, 'Edsger', null],
      [7, 'Grace', 'Arlington'],
    ]);
    const error = await rejected(
      engine.catalog.write([
        { entity: 'customers', rows: [{ id: 'eight', name: 9, city: '  ' }, { id: 9, town: 'Paris' }, {}] },
      ]),
    );
    expect(error.issues.map((issue) => [issue.code, issue.path])).toEqual([
      ['invalid_type', 'customers[0].id'],
      ['unknown_column', 'customers[1]'],
      ['empty_row', 'customers[2]'],
    ]);
  });

  it('reads values through getters, each once, also when a getter adds a property on the way', async () => {
    const { engine, spreadsheets } = await shopEngine();
    let reads = 0;
    const counted = {
      id: 4,
      get name() {
        reads++;
        return 'Alan';
      },
      city: 'Wilmslow',
    };
    const growing: Record<string, unknown> = {
      id: 5,
      get name() {
        growing.extra = 'late';
        return 'Barbara';
      },
    };
    await engine.catalog.write([{ entity: 'customers', rows: [counted, { id: 6, name: 'Edsger' }] }]);
    expect(reads).toBe(1);
    expect(spreadsheets.cells('shop', 'customers')?.slice(4)).toEqual([
      [4, 'Alan', 'Wilmslow'],
      [6, 'Edsger', null],
    ]);
    // The keys were taken before the getter ran, so the property it adds is not part of the row.
    await engine.catalog.write([{ entity: 'customers', rows: [growing] }]);
    expect(spreadsheets.cells('shop', 'customers')?.at(-1)).toEqual([5, 'Barbara', null]);
  });

  it("takes a row's own keys only: inherited ones are not columns, whatever the rows before it", async () => {
    const { engine, spreadsheets } = await shopEngine();
    class Customer {
      constructor(
        public id: number,
        public name: string,
      ) {}
      get city(): string {
        return 'from the prototype';
      }
    }
    const inherits = Object.create({ city: 'inherited' }) as Record<string, unknown>;
    inherits.id = 6;
    inherits.name = 'Edsger';
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, {
      id: 7,
      name: 'Grace',
      city: 'Arlington',
    });
    await engine.catalog.write([
      {
        entity: 'customers',
        rows: [
          { id: 4, name: 'Alan', city: 'Wilmslow' },
          inherits,
          new Customer(5, 'Barbara') as unknown as Record<string, unknown>,
          bare,
        ],
      },
    ]);
    expect(spreadsheets.cells('shop', 'customers')?.slice(4)).toEqual([
      [4, 'Alan', 'Wilmslow'],
      [6, 'Edsger', null],
      [5, 'Barbara', null],
      [7, 'Grace', 'Arlington'],
    ]);
  });

  it('ignores a key added to Object.prototype, as before', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const proto = Object.prototype as Record<string, unknown>;
    proto.city = 'polluted';
    try {
      await engine.catalog.write([
        {
          entity: 'customers',
          rows: [
            { id: 4, name: 'Alan', city: 'Wilmslow' },
            { id: 5, name: 'Barbara' },
          ],
        },
      ]);
    } finally {
      delete proto.city;
    }
    expect(spreadsheets.cells('shop', 'customers')?.slice(4)).toEqual([
      [4, 'Alan', 'Wilmslow'],
      [5, 'Barbara', null],
    ]);
  });
});

describe('rows given to engine.catalog.append, upsert, update and delete', () => {
  it('each resolves to { written } as a number, as write_entity and the rows endpoint do', async () => {
    const { engine } = await shopEngine();
    expect(await engine.catalog.append('customers', [{ id: 4, name: 'Alan', city: 'Wilmslow' }])).toEqual({
      written: 1,
    });
    expect(
      await engine.catalog.upsert('customers', [
        { id: 4, city: 'Manchester' },
        { id: 5, name: 'Barbara', city: 'Boston' },
      ]),
    ).toEqual({ written: 2 });
    expect(await engine.catalog.update('customers', [{ id: 5, city: 'Cambridge' }])).toEqual({ written: 1 });
    expect(await engine.catalog.delete('customers', [{ id: 4 }, { id: 5 }])).toEqual({ written: 2 });
    // A write to several entities keeps its count by entity.
    expect(await engine.catalog.write([{ entity: 'customers', rows: [[6, 'Edsger', null]] }])).toEqual({
      written: { customers: 1 },
    });
  });

  it('take a data table, as write_entity does: columns as names or { name }', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const table = {
      columns: ['id', { name: 'name' }, 'city'],
      rows: [
        [4, 'Alan', 'Wilmslow'],
        [5, 'Barbara'],
      ],
    };
    expect(await engine.catalog.append('customers', table)).toEqual({ written: 2 });
    expect(
      await engine.catalog.upsert('customers', { columns: ['id', 'city'], rows: [[5, 'Boston']] }),
    ).toEqual({
      written: 1,
    });
    expect(await engine.catalog.delete('customers', { columns: [{ name: 'id' }], rows: [[4]] })).toEqual({
      written: 1,
    });
    expect(
      await engine.catalog.write([
        { entity: 'customers', rows: { columns: ['id', 'name'], rows: [[6, 'Edsger']] } },
      ]),
    ).toEqual({ written: { customers: 1 } });
    expect(spreadsheets.cells('shop', 'customers')!.slice(4)).toEqual([
      [5, 'Barbara', 'Boston'],
      [6, 'Edsger', null],
    ]);
  });

  it.each([
    ['a number', 5],
    ['null', null],
    ['a string', 'id,name'],
    ['an object that is no table', { id: 4 }],
  ])('refuse %s as rows with write_rejected naming rows; nothing is written', async (_, rows) => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'customers');
    for (const write of [
      () => engine.catalog.append('customers', rows as never),
      () => engine.catalog.upsert('customers', rows as never),
      () => engine.catalog.update('customers', rows as never),
    ]) {
      const error = await rejected(write());
      expect(error.code).toBe('write_rejected');
      expect(error.issues).toEqual([expect.objectContaining({ code: 'invalid_type', path: 'rows' })]);
      expect(error.message).not.toMatch(/is not a function|Cannot read/);
    }
    const keys = await rejected(engine.catalog.delete('customers', rows as never));
    expect(keys.issues[0]).toMatchObject({ path: 'keys' });
    const several = await rejected(
      engine.catalog.write([
        { entity: 'customers', rows: [] },
        { entity: 'customers', rows: rows as never },
      ]),
    );
    expect(several.issues[0]).toMatchObject({ path: 'writes[1].rows' });
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });

  it('refuse a data table whose column name repeats, naming the column; nothing is written', async () => {
    const { engine, spreadsheets } = await shopEngine();
    const before = spreadsheets.cells('shop', 'customers');
    const error = await rejected(
      engine.catalog.append('customers', { columns: ['id', 'id'], rows: [[8, 9]] }),
    );
    expect(error.code).toBe('write_rejected');
    expect(error.issues).toEqual([
      {
        code: 'repeated_column',
        path: 'rows.columns[1]',
        message: 'the column "id" is given twice (columns[0] and columns[1])',
      },
    ]);
    expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
  });

  it('refuse a data table with a column without a name or a row that is no array, naming the position', async () => {
    const { engine } = await shopEngine();
    const error = await rejected(
      engine.catalog.upsert('customers', {
        columns: ['id', { label: 'name' }],
        rows: [[1, 'A'], 7, null],
      } as never),
    );
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'rows.columns[1]',
      'rows.rows[1]',
      'rows.rows[2]',
    ]);
  });

  it.each([
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [Number.NEGATIVE_INFINITY, '-Infinity'],
  ])('say what a NUMBER cell got when it is %s', async (value, shown) => {
    const { engine } = await shopEngine();
    const error = await rejected(engine.catalog.append('customers', [{ id: value, name: 'Nan' }]));
    expect(error.issues).toEqual([
      expect.objectContaining({
        path: 'customers[0].id',
        message: `row 1 of "customers": column "id" must be NUMBER, got ${shown}`,
      }),
    ]);
  });
});

describe('engine.catalog.write given something else than writes', () => {
  it.each([['UPSERT'], ['bogus'], [null], [42]])(
    'refuses the write mode %j, naming it; nothing is written',
    async (mode) => {
      const { engine, spreadsheets } = await shopEngine();
      const before = spreadsheets.cells('shop', 'customers');
      const error = await rejected(
        engine.catalog.write([
          { entity: 'customers', rows: [{ id: 1, name: 'Changed' }], mode: 'append' },
          {
            entity: 'customers',
            rows: [
              { id: 1, name: 'Changed' },
              { id: 9, name: 'New' },
            ],
            mode,
          } as never,
        ]),
      );
      expect(error.code).toBe('write_rejected');
      expect(error.issues).toEqual([
        expect.objectContaining({ code: 'invalid_value', path: 'writes[1].mode' }),
      ]);
      expect(error.issues[0]!.message).toContain('"append", "replace", "upsert", "update", "delete"');
      expect(spreadsheets.cells('shop', 'customers')).toEqual(before);
    },
  );

  it('refuses writes that are no array, and a write that is no object or names no entity, naming each', async () => {
    const { engine } = await shopEngine();
    for (const writes of [null, 'customers', { entity: 'customers', rows: [] }]) {
      const error = await rejected(engine.catalog.write(writes as never));
      expect(error.issues.map((issue) => issue.path)).toEqual(['writes']);
    }
    const error = await rejected(
      engine.catalog.write([
        null,
        { rows: [] },
        { entity: 5, rows: [] },
        { entity: 'customers', rows: [] },
      ] as never),
    );
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'writes[0]',
      'writes[1].entity',
      'writes[2].entity',
    ]);
  });
});

describe('entities named like Object properties', () => {
  it.each([['__proto__'], ['constructor'], ['toString']])(
    'count the rows written to an entity named %s as for any other name',
    async (name) => {
      const spreadsheets = new MemorySpreadsheets({
        book: {
          sheet: [
            ['id', 'label'],
            [1, 'one'],
          ],
        },
      });
      const engine = new Engine({ spreadsheets });
      await engine.catalog.registerEntity({
        name,
        columns: [
          { name: 'id', type: 'NUMBER' },
          { name: 'label', type: 'STRING' },
        ],
        primary_key: ['id'],
        spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'sheet', origin: { row: 0, col: 0 } },
      });
      expect(
        await engine.catalog.upsert(name, [
          { id: 1, label: 'uno' },
          { id: 2, label: 'two' },
        ]),
      ).toEqual({
        written: 2,
      });
      const result = await engine.catalog.write([{ entity: name, rows: [{ id: 3, label: 'three' }] }]);
      expect(Object.getOwnPropertyDescriptor(result.written, name)?.value).toBe(1);
      expect(JSON.parse(JSON.stringify(result))).toEqual(JSON.parse(`{"written":{"${name}":1}}`));
      await engine.workflows.create({
        name: 'drop',
        steps: [
          {
            name: 'drop',
            type: 'l2',
            l2_data: {
              provider: 'catalog',
              module: 'action',
              action: 'write_entity',
              input_data: { entity_name: name, write_mode: 'delete', rows: [{ id: 3 }] },
            },
          },
        ],
        wires: [],
      });
      const run = await engine.run('drop');
      expect(run.output).toEqual({ drop: { written: 1 } });
      expect(spreadsheets.cells('book', 'sheet')).toEqual([
        ['id', 'label'],
        [1, 'uno'],
        [2, 'two'],
      ]);
    },
  );
});
