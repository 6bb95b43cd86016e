import { describe, expectTypeOf, it } from 'vitest';
import { entity, relationship, type ColumnsOf, type EntityDefinition } from '../../src/builders/index.js';

const customers = entity('customers').column('id', 'NUMBER').column('name', 'STRING');
const orders = entity('orders')
  .column('order_id', 'NUMBER')
  .column('customer_id', 'NUMBER')
  .column('total', 'NUMBER');

describe('entity builder types', () => {
  it('remembers the declared column names', () => {
    expectTypeOf<ColumnsOf<typeof customers>>().toEqualTypeOf<'id' | 'name'>();
    expectTypeOf(customers.name).toEqualTypeOf<'customers'>();
  });

  it('accepts declared columns in primaryKey', () => {
    customers.primaryKey('id');
    orders.primaryKey('order_id', 'customer_id');
  });

  it('rejects an undeclared column in primaryKey', () => {
    // @ts-expect-error 'email' is not a declared column
    customers.primaryKey('email');
    // @ts-expect-error 'total' belongs to orders, not customers
    customers.primaryKey('id', 'total');
  });

  it('requires at least one primary key column', () => {
    // @ts-expect-error an empty primary key
    customers.primaryKey();
  });

  it('rejects a column type that is not allowed', () => {
    // @ts-expect-error lowercase type
    entity('x').column('a', 'number');
  });

  it('build() keeps names and columns in the definition type', () => {
    const def = customers.primaryKey('id').sheet({ spreadsheet_id: 's', sheet_name: 'c' }).build();
    expectTypeOf(def).toEqualTypeOf<EntityDefinition<'customers', 'id' | 'name'>>();
    expectTypeOf(def.primary_key).toEqualTypeOf<Array<'id' | 'name'>>();
  });
});

describe('relationship builder types', () => {
  it('accepts columns of the source and target builders', () => {
    relationship('r').foreignKey({
      source: orders,
      sourceColumns: ['customer_id'],
      target: customers,
      targetColumns: ['id'],
    });
  });

  it('accepts columns of built definitions', () => {
    const c = customers.primaryKey('id').sheet({ spreadsheet_id: 's', sheet_name: 'c' }).build();
    const rel = relationship('r')
      .foreignKey({ source: orders, sourceColumns: ['customer_id'], target: c, targetColumns: ['id'] })
      .build();
    expectTypeOf(rel.source_entity).toEqualTypeOf<'orders'>();
    expectTypeOf(rel.target_entity).toEqualTypeOf<'customers'>();
    relationship('r').foreignKey({
      source: orders,
      sourceColumns: ['customer_id'],
      target: c,
      // @ts-expect-error 'customer_id' is not a column of customers
      targetColumns: ['customer_id'],
    });
  });

  it('rejects an unknown source column', () => {
    relationship('r').foreignKey({
      source: orders,
      // @ts-expect-error 'cust' is not a column of orders
      sourceColumns: ['cust'],
      target: customers,
      targetColumns: ['id'],
    });
  });

  it('rejects an unknown target column', () => {
    relationship('r').foreignKey({
      source: orders,
      sourceColumns: ['customer_id'],
      target: customers,
      // @ts-expect-error 'customer_id' is not a column of customers
      targetColumns: ['customer_id'],
    });
  });

  it('rejects column lists of unequal length', () => {
    relationship('r').foreignKey({
      source: orders,
      sourceColumns: ['customer_id', 'order_id'],
      target: customers,
      // @ts-expect-error two source columns, one target column
      targetColumns: ['id'],
    });
  });

  it('rejects an empty source column list', () => {
    // @ts-expect-error no columns
    relationship('r').foreignKey({ source: orders, sourceColumns: [], target: customers, targetColumns: [] });
  });

  it('accepts any column names for entities given by name', () => {
    relationship('r').foreignKey({
      source: 'orders',
      sourceColumns: ['a', 'b'],
      target: 'customers',
      targetColumns: ['c', 'd'],
    });
  });
});

describe('a key guessed where the builder does not take it', () => {
  it('is no column option: the message says to call primaryKey', () => {
    entity('x').column('id', 'NUMBER', { number: { min: 1 } });
    // @ts-expect-error not a column option: the primary key is set with .primaryKey(...columns)
    entity('x').column('id', 'NUMBER', { primaryKey: true });
    // @ts-expect-error not a column option: the primary key is set with .primaryKey(...columns)
    entity('x').column('id', 'NUMBER', { primary_key: true });
    // @ts-expect-error not a column option: the primary key is set with .primaryKey(...columns)
    entity('x').column('id', 'NUMBER', { key: true });
  });

  it('is no method under the spec field name or a shorter one', () => {
    // @ts-expect-error the method is primaryKey (the definition's field is primary_key)
    customers.primary_key('id');
    // @ts-expect-error the method is primaryKey
    customers.key('id');
  });
});
