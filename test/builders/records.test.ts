import { describe, expect, it } from 'vitest';
import { application, datagrid, entity, form, ValidationError } from '../../src/index.js';

describe('builders for writes by key and record screens', () => {
  it('builds an entity whose NUMBER column carries rules; rules on another type are refused', () => {
    const built = entity('orders')
      .column('id', 'NUMBER', { number: { min: 1, step: 1 } })
      .primaryKey('id')
      .sheet({ spreadsheet_id: 's', sheet_name: 'orders' })
      .build();
    expect(built.columns[0]).toEqual({ name: 'id', type: 'NUMBER', number: { min: 1, step: 1 } });
    expect(() =>
      entity('bad')
        .column('id', 'STRING', { number: { min: 1 } })
        .primaryKey('id')
        .sheet({ spreadsheet_id: 's', sheet_name: 'bad' })
        .build(),
    ).toThrow(ValidationError);
  });

  it('builds a screen editing one record: a write form with a key and a filtered grid', () => {
    const app = application()
      .screen('customer', (s) =>
        s
          .row(
            form({
              name: 'edit',
              items: [{ label: 'City', name: 'city', type: 'text' }],
              write: { entity_name: 'customers', write_mode: 'update', key: { id: '{{query_params.id}}' } },
              redirect: '/screens/customer?id={{output.id}}',
            }),
          )
          .row(
            datagrid('orders', {
              operation: {
                filters: [{ column: 'customer_id', operator: 'EQUALS', value: '{{query_params.id}}' }],
              },
            }),
          ),
      )
      .start('customer')
      .build();
    const [[edit], [grid]] = app.screens[0]!.components as [[any], [any]];
    expect(edit.form.job).toEqual({
      type: 'write',
      entity_name: 'customers',
      write_mode: 'update',
      key: { id: '{{query_params.id}}' },
    });
    expect(grid.datagrid.operation.filters[0].value).toBe('{{query_params.id}}');
  });

  it('refuses a form with both a workflow and a write, or neither', () => {
    expect(() => form({ items: [] })).toThrow('form needs either workflow');
    expect(() =>
      form({ items: [], workflow: 'w', write: { entity_name: 'e', write_mode: 'append' } }),
    ).toThrow(TypeError);
  });
});
