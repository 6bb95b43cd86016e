import type { CellValue } from '../src/adapters/types.js';
import type { Entity, Relationship } from '../src/schema/index.js';

/** The customers entity used across tests. */
export const customersEntity: Entity = {
  name: 'customers',
  description: 'People who buy',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING' },
    { name: 'city', type: 'STRING' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'customers', origin: { row: 0, col: 0 } },
};

/** The orders entity; its sheet starts at B2 to exercise the origin. */
export const ordersEntity: Entity = {
  name: 'orders',
  description: 'What they bought',
  columns: [
    { name: 'order_id', type: 'NUMBER' },
    { name: 'customer_id', type: 'NUMBER' },
    { name: 'item', type: 'STRING' },
    { name: 'amount', type: 'NUMBER' },
  ],
  primary_key: ['order_id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 1, col: 1 } },
};

/** orders.customer_id -> customers.id, enforced. */
export const ordersCustomerFk: Relationship = {
  name: 'orders_customer',
  relationship_type: 'foreign_key',
  source_entity: 'orders',
  target_entity: 'customers',
  foreign_key_config: { source_columns: ['customer_id'], target_columns: ['id'], enforce_foreign_key: true },
};

/** Seed cells for the shop spreadsheet. */
export function shopSheets(): Record<string, Record<string, CellValue[][]>> {
  return {
    shop: {
      customers: [
        ['id', 'name', 'city'],
        [1, 'Ada', 'London'],
        [2, 'Grace', 'New York'],
        [3, 'Linus', 'Helsinki'],
      ],
      orders: [
        [],
        [null, 'order_id', 'customer_id', 'item', 'amount', 'note'],
        [null, 10, 1, 'Lamp', 25, 'x'],
        [null, 11, 1, 'Desk', 150.5, null],
        [null, 12, 2, 'Chair', 80, ''],
        [null, 13, 3, 'Pen', 2, null],
      ],
    },
  };
}
