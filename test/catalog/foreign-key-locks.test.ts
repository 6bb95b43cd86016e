import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets, WriteRejectedError, type SpreadsheetAdapter } from '../../src/index.js';

const customers = {
  name: 'customers',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'name', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

const orders = {
  name: 'orders',
  columns: [
    { name: 'order_id', type: 'NUMBER' as const },
    { name: 'customer_id', type: 'NUMBER' as const },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

/**
 * The memory adapter, but the first read of the customers sheet answers late (a slow network): the
 * cells are taken when asked, the answer arrives after `ms`.
 */
function slowFirstCustomersRead(memory: MemorySpreadsheets, ms: number): SpreadsheetAdapter {
  let slowed = false;
  return {
    read: async (ranges) => {
      const cells = memory.read(ranges);
      if (!slowed && ranges.some((r) => r.sheet_name === 'customers')) {
        slowed = true;
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
      return cells;
    },
    append: (request) => memory.append(request),
    write: (request) => memory.write(request),
    update: (request) => memory.update(request),
  };
}

async function shop(adapter: SpreadsheetAdapter): Promise<Engine> {
  const engine = new Engine({ spreadsheets: adapter });
  await engine.catalog.registerEntity(customers);
  await engine.catalog.registerEntity(orders);
  await engine.catalog.createRelationship({
    name: 'order_customer',
    relationship_type: 'foreign_key',
    source_entity: 'orders',
    target_entity: 'customers',
    foreign_key_config: {
      source_columns: ['customer_id'],
      target_columns: ['id'],
      enforce_foreign_key: true,
    },
  });
  return engine;
}

describe('enforced foreign keys under writes of one engine at the same time', () => {
  it('never let an order for a customer and the deletion of that customer both succeed', async () => {
    const memory = new MemorySpreadsheets({
      shop: {
        customers: [
          ['id', 'name'],
          [1, 'Ada'],
          [2, 'Grace'],
        ],
        orders: [
          ['order_id', 'customer_id'],
          [10, 2],
        ],
      },
    });
    const engine = await shop(slowFirstCustomersRead(memory, 50));
    // The order's check reads customers (slowly); the delete starts while that read is under way.
    const order = engine.catalog.append('orders', [{ order_id: 11, customer_id: 1 }]).then(
      () => 'written',
      (e: unknown) => e,
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    const removal = engine.catalog.delete('customers', [{ id: 1 }]).then(
      () => 'written',
      (e: unknown) => e,
    );
    const outcomes = await Promise.all([order, removal]);
    // One of the two goes first; the other sees it and is refused.
    expect(outcomes.filter((o) => o === 'written')).toHaveLength(1);
    const refused = outcomes.find((o) => o !== 'written');
    expect(refused).toBeInstanceOf(WriteRejectedError);
    const ids = memory
      .cells('shop', 'customers')!
      .slice(1)
      .map((row) => row[0]);
    const referenced = memory
      .cells('shop', 'orders')!
      .slice(1)
      .map((row) => row[1]);
    for (const customer of referenced) expect(ids).toContain(customer);
  });
});
