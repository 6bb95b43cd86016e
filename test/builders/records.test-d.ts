import { describe, it } from 'vitest';
import { entity, writeEntity } from '../../src/builders/index.js';

const customers = entity('customers')
  .column('id', 'NUMBER', { number: { min: 1 } })
  .column('city', 'STRING');

describe('writeEntity builder types', () => {
  it('takes rows keyed by the declared columns, or a reference', () => {
    writeEntity(customers, 'update', [{ id: '{{input.id}}', city: 'Oslo' }]);
    writeEntity(customers, 'delete', '{{read.body.table}}');
    // @ts-expect-error 'town' is not a column of customers
    writeEntity(customers, 'upsert', [{ id: 1, town: 'Oslo' }]);
    // @ts-expect-error 'merge' is not a write mode
    writeEntity(customers, 'merge', []);
  });
});
