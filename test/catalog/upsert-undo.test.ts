import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  UpstreamError,
  isStepwireError,
  type SpreadsheetAdapter,
} from '../../src/index.js';

const customers = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

function seeded(): MemorySpreadsheets {
  return new MemorySpreadsheets({
    shop: {
      customers: [
        ['id', 'note', 'name'],
        [1, '=A1', 'Ada'],
        [2, 'keep', 'Bob'],
      ],
    },
  });
}

/**
 * The memory adapter, but appends fail as a spreadsheet service's outage would, and every `update`
 * after the first `updatesThatWork` fails too (thrown at once, as a synchronous adapter throws).
 */
function outage(memory: MemorySpreadsheets, updatesThatWork: number): SpreadsheetAdapter {
  let updates = 0;
  return {
    read: (ranges) => memory.read(ranges),
    append: () => {
      throw new UpstreamError('the service lost the append', 503);
    },
    write: (request) => memory.write(request),
    update: (request) => {
      updates += 1;
      if (updates > updatesThatWork) throw new UpstreamError('the service is down', 503);
      memory.update(request);
    },
  };
}

describe('an upsert whose new rows cannot be appended', () => {
  it('puts the rows it changed back and fails with the append error', async () => {
    const memory = seeded();
    const before = memory.cells('shop', 'customers');
    const engine = new Engine({ spreadsheets: outage(memory, 99) });
    await engine.catalog.registerEntity(customers);
    const error = await engine.catalog
      .upsert('customers', [
        { id: 1, name: 'Changed' },
        { id: 3, name: 'New' },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as Error).message).toContain('lost the append');
    expect(memory.cells('shop', 'customers')).toEqual(before);
  });

  it('says the write is partial, naming the entity, when the changed rows cannot be put back either', async () => {
    const memory = seeded();
    const engine = new Engine({ spreadsheets: outage(memory, 1) });
    await engine.catalog.registerEntity(customers);
    const error = await engine.catalog
      .upsert('customers', [
        { id: 1, name: 'Changed' },
        { id: 3, name: 'New' },
      ])
      .catch((e: unknown) => e);
    // The sheet holds the changed row: the caller must be told, not shown the restore's own error.
    expect(memory.cells('shop', 'customers')![1]).toEqual([1, '=A1', 'Changed']);
    expect(isStepwireError(error) && error.code).toBe('write_partial');
    expect((error as Error).message).toContain('"customers"');
    expect((error as Error).message).toContain('lost the append');
    expect((error as Error).cause).toBeInstanceOf(UpstreamError);
  });
});
