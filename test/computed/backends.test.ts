// Computed columns read the same on every spreadsheet adapter: memory, Google Sheets (a local fake
// server on 127.0.0.1) and sheet files (.xlsx and .csv), and follow writes to the sheets they read.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { FileSpreadsheets } from '../../src/adapters/node/index.js';
import {
  Engine,
  MemorySpreadsheets,
  type CellValue,
  type Entity,
  type SpreadsheetAdapter,
} from '../../src/index.js';
import { startFakeSheets, type FakeSheets } from '../fakes/google-sheets.js';
import { seedCsv, seedXlsx } from '../node/sheet-files.js';

const CELLS: Record<string, CellValue[][]> = {
  customers: [
    ['id', 'name'],
    [1, 'Ada'],
    [2, 'Grace'],
  ],
  orders: [
    ['order_id', 'customer_id', 'amount', 'qty'],
    [10, 1, 25, 2],
    [11, 1, 150.5, 1],
    [12, 2, 80, 3],
  ],
};

const customers: Entity = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};
const orders: Entity = {
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'amount', type: 'NUMBER' },
    { name: 'qty', type: 'NUMBER' },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

let fake: FakeSheets;
let auth: OAuth2Client;
const dirs: string[] = [];
beforeAll(async () => {
  fake = await startFakeSheets();
  auth = new OAuth2Client();
  auth.setCredentials({ access_token: fake.token });
});
afterAll(async () => {
  await fake.close();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'stepwire-computed-'));
  dirs.push(dir);
  return dir;
};
const copy = () => Object.fromEntries(Object.entries(CELLS).map(([k, rows]) => [k, rows.map((r) => [...r])]));

const BACKENDS: { name: string; create(): Promise<SpreadsheetAdapter> }[] = [
  { name: 'memory', create: async () => new MemorySpreadsheets({ shop: copy() }) },
  {
    name: 'Google Sheets (local fake)',
    create: async () => {
      fake.reset();
      fake.addSpreadsheet('shop', copy());
      return new GoogleSheets({ auth, rootUrl: fake.url, retry: { attempts: 2, baseMs: 1, capMs: 2 } });
    },
  },
  {
    name: 'FileSpreadsheets .xlsx',
    create: async () => {
      const dir = await freshDir();
      await seedXlsx(dir, 'shop', copy());
      return new FileSpreadsheets({ dir });
    },
  },
  {
    name: 'FileSpreadsheets .csv',
    create: async () => {
      const dir = await freshDir();
      await seedCsv(dir, 'shop', copy());
      return new FileSpreadsheets({ dir });
    },
  },
];

describe('computed columns on every spreadsheet adapter', () => {
  for (const backend of BACKENDS) {
    it(`${backend.name}: rollups, lookups and formulas read, sort and follow writes`, async () => {
      const engine = new Engine({ spreadsheets: await backend.create() });
      await engine.catalog.registerEntity(customers);
      await engine.catalog.registerEntity(orders);
      await engine.catalog.createRelationship({
        name: 'orders_customer',
        relationship_type: 'foreign_key',
        source_entity: 'orders',
        target_entity: 'customers',
        foreign_key_config: {
          source_columns: ['customer_id'],
          target_columns: ['id'],
          enforce_foreign_key: true,
        },
      });
      await engine.catalog.putEntity({
        ...orders,
        columns: [
          ...orders.columns,
          { name: 'line', type: 'NUMBER', formula: 'amount * qty' },
          { name: 'customer', type: 'STRING', lookup: { relationship: 'orders_customer', column: 'name' } },
        ],
      });
      await engine.catalog.putEntity({
        ...customers,
        columns: [
          ...customers.columns,
          { name: 'orders', type: 'NUMBER', rollup: { relationship: 'orders_customer', function: 'count' } },
          {
            name: 'total',
            type: 'NUMBER',
            rollup: { relationship: 'orders_customer', function: 'sum', column: 'line' },
          },
        ],
      });
      const byTotal = {
        entity_name: 'customers',
        operation: { order_by: [{ column: 'total', direction: 'DESC' as const }] },
      };
      const first = await engine.catalog.getEntity(byTotal);
      expect(first.body.error?.errors).toEqual([]);
      expect(first.body.table.rows).toEqual([
        [2, 'Grace', 1, 240],
        [1, 'Ada', 2, 200.5],
      ]);
      const lines = await engine.catalog.getEntity({
        entity_name: 'orders',
        operation: {
          select_columns: [{ column: 'order_id' }, { column: 'customer' }, { column: 'line' }],
          filters: [{ column: 'customer', operator: 'EQUALS', value: 'Ada' }],
        },
      });
      expect(lines.body.table.rows).toEqual([
        [10, 'Ada', 50],
        [11, 'Ada', 150.5],
      ]);
      await engine.catalog.append('orders', [{ order_id: 13, customer_id: 1, amount: 100, qty: 1 }]);
      const after = await engine.catalog.getEntity(byTotal);
      expect(after.body.table.rows).toEqual([
        [1, 'Ada', 3, 300.5],
        [2, 'Grace', 1, 240],
      ]);
    });
  }
});
