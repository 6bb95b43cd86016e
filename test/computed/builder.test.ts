import { describe, expect, it } from 'vitest';
import { ValidationError, entity } from '../../src/index.js';

describe('entity() with computed columns, rules and checks', () => {
  it('builds the definition an engine registers', () => {
    const customers = entity('customers')
      .column('id', 'NUMBER', { required: true })
      .column('email', 'STRING', { format: 'email', max_length: 200 })
      .column('tier', 'STRING', { enum: ['gold', 'silver'] })
      .rollup('orders', 'NUMBER', { relationship: 'orders_customer', function: 'count' })
      .formula('busy', 'BOOLEAN', 'orders > 10')
      .check('size(email) > 3', 'email too short')
      .primaryKey('id')
      .sheet({ spreadsheet_id: 's', sheet_name: 'customers' })
      .build();
    expect(customers.columns).toEqual([
      { name: 'id', type: 'NUMBER', required: true },
      { name: 'email', type: 'STRING', format: 'email', max_length: 200 },
      { name: 'tier', type: 'STRING', enum: ['gold', 'silver'] },
      { name: 'orders', type: 'NUMBER', rollup: { relationship: 'orders_customer', function: 'count' } },
      { name: 'busy', type: 'BOOLEAN', formula: 'orders > 10' },
    ]);
    expect(customers.checks).toEqual([{ expression: 'size(email) > 3', message: 'email too short' }]);
  });

  it('refuses a formula that does not type-check, at build', () => {
    const build = () =>
      entity('t')
        .column('id', 'NUMBER')
        .formula('x', 'STRING', 'id * 2')
        .primaryKey('id')
        .sheet({ spreadsheet_id: 's', sheet_name: 't' })
        .build();
    expect(build).toThrow(ValidationError);
    expect(build).toThrow(/gives double, expected string/);
  });
});
