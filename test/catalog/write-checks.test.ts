import { describe, expect, it } from 'vitest';
import { WriteRejectedError } from '../../src/index.js';
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
      'row 2 of "customers" repeats primary key (id=1) of existing row 1',
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
