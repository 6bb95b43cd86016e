import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, ValidationError, type EntityBody } from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { call } from '../http/helpers.js';

const customers = (primary_key: string[], sheet_name = 'customers'): EntityBody => ({
  name: 'customers',
  description: 'Customers',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
  ],
  primary_key,
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name, origin: { row: 0, col: 0 } },
});

const sheets = () =>
  new MemorySpreadsheets({
    shop: {
      customers: [
        ['customer_id', 'name'],
        [1, 'Ada'],
      ],
      fine: [
        ['name', 'id'],
        [1, 'Ada'],
      ],
      blank: [],
    },
  });

describe('registering an entity checks the header row of a sheet it can read', () => {
  it('refuses a primary key that is no header of the sheet, naming the key and the header row', async () => {
    const engine = new Engine({ spreadsheets: sheets() });
    const error = await engine.catalog.registerEntity(customers(['id'])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const issues = (error as ValidationError).issues;
    expect(issues).toEqual([
      expect.objectContaining({ code: 'missing_column', path: 'spreadsheet_config' }),
      expect.objectContaining({ code: 'missing_key_column', path: 'primary_key.0' }),
    ]);
    expect(issues[0]!.message).toContain('is missing column "id" (found: "customer_id", "name")');
    expect(issues[1]!.message).toBe(
      'primary key column "id" is not in the header row of sheet "customers" (spreadsheet "shop")',
    );
    // Nothing was stored.
    expect(await engine.catalog.listEntities()).toEqual([]);
    // Replacing is checked alike.
    await expect(engine.catalog.upsertEntity(customers(['id']))).rejects.toBeInstanceOf(ValidationError);
  });

  it('refuses a sheet whose header row is empty', async () => {
    const engine = new Engine({ spreadsheets: sheets() });
    await expect(engine.catalog.registerEntity(customers(['id'], 'blank'))).rejects.toThrow(
      /missing columns "id", "name" \(found: no headers\)/,
    );
  });

  it('registers when the header names every column, in any order, or when the sheet cannot be read yet', async () => {
    const engine = new Engine({ spreadsheets: sheets() });
    await expect(engine.catalog.registerEntity(customers(['id'], 'fine'))).resolves.toMatchObject({
      name: 'customers',
    });
    const later = new Engine({ spreadsheets: new MemorySpreadsheets() });
    await expect(later.catalog.registerEntity(customers(['id']))).resolves.toMatchObject({
      name: 'customers',
    });
  });

  it('answers 400 over HTTP with the issues, for both registration routes', async () => {
    const handler = createHandler(new Engine({ spreadsheets: sheets() }));
    for (const path of ['/catalog/entity', '/catalog/entities/spreadsheet/register']) {
      const answer = await call(handler, 'POST', path, customers(['id']));
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ path: 'primary_key.0', code: 'missing_key_column' }),
        ]),
      );
    }
  });
});
