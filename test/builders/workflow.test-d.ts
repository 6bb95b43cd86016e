import { describe, expectTypeOf, it } from 'vitest';
import {
  atlasGet,
  entity,
  getEntity,
  l2,
  request,
  runWorkflow,
  transform,
  wait,
  workflow,
  writeEntity,
  type FromJsonSchema,
  type InputOf,
  type StepDef,
  type WorkflowDefinition,
} from '../../src/builders/index.js';

const orderInput = workflow('order')
  .input({
    schema: {
      type: 'object',
      properties: {
        amount: { type: 'number' },
        note: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        priority: { enum: ['low', 'high'] },
        paid: { type: 'boolean' },
        address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      required: ['amount', 'paid'],
    },
  })
  .step('check', l2('platform', 'dummy', 'dummy_task', {}))
  .step('send', l2('chat', 'bot', 'send_message', { channel: 'c', message: 'm' }));

describe('inferred input type', () => {
  it('maps the JSON Schema literal to a TypeScript type', () => {
    expectTypeOf<InputOf<typeof orderInput>>().toEqualTypeOf<{
      amount: number;
      paid: boolean;
      note?: string;
      tags?: string[];
      priority?: 'low' | 'high';
      address?: { city: string };
    }>();
  });

  it('carries the input type to the built definition', () => {
    const def = orderInput.build();
    expectTypeOf(def).toEqualTypeOf<WorkflowDefinition<InputOf<typeof orderInput>>>();
    expectTypeOf<InputOf<typeof def>>().toHaveProperty('amount').toEqualTypeOf<number>();
  });

  it('maps scalar and array schemas', () => {
    expectTypeOf<FromJsonSchema<{ type: 'integer' }>>().toEqualTypeOf<number>();
    expectTypeOf<FromJsonSchema<{ type: 'array'; items: { type: 'boolean' } }>>().toEqualTypeOf<boolean[]>();
    expectTypeOf<FromJsonSchema<{ type: 'object' }>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<FromJsonSchema<{ const: 3 }>>().toEqualTypeOf<3>();
  });

  it('types defaults from the schema', () => {
    workflow('w').input({
      schema: { type: 'object', properties: { n: { type: 'number' } } },
      defaults: { n: 1 },
    });
    workflow('w').input({
      schema: { type: 'object', properties: { n: { type: 'number' } } },
      // @ts-expect-error default of the wrong type
      defaults: { n: 'one' },
    });
  });

  it('is unknown without a declared input', () => {
    expectTypeOf<InputOf<ReturnType<typeof workflow>>>().toEqualTypeOf<unknown>();
  });
});

describe('wires', () => {
  it('accept declared steps and the input name', () => {
    orderInput
      .wire({ from: 'check', to: 'send' })
      .wire({ from: 'input', to: 'check', fromPath: 'amount', toPath: 'value' });
  });

  it('reject an unknown source step', () => {
    // @ts-expect-error 'nope' is not a step
    orderInput.wire({ from: 'nope', to: 'send' });
  });

  it('reject an unknown target step, and the input as a target', () => {
    // @ts-expect-error 'nope' is not a step
    orderInput.wire({ from: 'check', to: 'nope' });
    // @ts-expect-error the input is not a step
    orderInput.wire({ from: 'check', to: 'input' });
  });

  it('follow a renamed input', () => {
    const w = workflow('w')
      .input({ name: 'order', schema: { type: 'object' } })
      .step('a', l2('p', 'm', 'a'));
    w.wire({ from: 'order', to: 'a' });
    // @ts-expect-error the input is named 'order' here
    w.wire({ from: 'input', to: 'a' });
  });
});

describe('references', () => {
  it('accept earlier steps and input properties', () => {
    orderInput.step('pdf', ({ ref }) => {
      const amount = ref('input.amount');
      expectTypeOf(amount).toEqualTypeOf<'{{input.amount}}'>();
      return l2('platform', 'converters', 'create_pdf', {
        template: ref('check.body.table'),
        amount,
        row: ref('send.rows[0]'),
        whole: ref('check'),
      });
    });
  });

  it('reject an unknown step', () => {
    // @ts-expect-error 'nope' is not a step
    orderInput.step('pdf', ({ ref }) => l2('p', 'm', 'a', { x: ref('nope.field') }));
  });

  it('reject an input property that the schema does not declare', () => {
    // @ts-expect-error 'amout' is not an input property
    orderInput.step('pdf', ({ ref }) => l2('p', 'm', 'a', { x: ref('input.amout') }));
  });

  it('reject a step that is declared later', () => {
    // @ts-expect-error 'later' is not declared yet
    workflow('w').step('first', ({ ref }) => l2('p', 'm', 'a', { x: ref('later.x') }));
  });

  it('check output references', () => {
    orderInput.output({ data: ({ ref }) => ({ url: ref('send.file_url') }) });
    // @ts-expect-error 'upload' is not a step
    orderInput.output({ data: ({ ref }) => ({ url: ref('upload.file_url') }) });
  });
});

describe('conditions', () => {
  it('accept paths of declared steps and input properties', () => {
    orderInput.when('send', [
      { data_path: 'input.paid', value: true },
      { data_path: 'check.ok', value: true },
    ]);
    orderInput.step('extra', { ...l2('p', 'm', 'a'), conditions: [{ data_path: 'input.amount', value: 1 }] });
  });

  it('reject an unknown step in when()', () => {
    // @ts-expect-error 'nope' is not a step
    orderInput.when('nope', []);
  });

  it('reject a path to an unknown step or input property', () => {
    // @ts-expect-error 'nope' is not a step
    orderInput.when('send', [{ data_path: 'nope.ok', value: true }]);
    orderInput.step('extra', {
      ...l2('p', 'm', 'a'),
      // @ts-expect-error 'missing' is not an input property
      conditions: [{ data_path: 'input.missing', value: 1 }],
    });
  });
});

describe('step names', () => {
  it('reject a duplicate step name and the input name', () => {
    // @ts-expect-error 'check' is already a step
    orderInput.step('check', l2('p', 'm', 'a'));
    // @ts-expect-error 'input' is the input name
    orderInput.step('input', l2('p', 'm', 'a'));
  });
});

describe('entity step helpers', () => {
  const orders = entity('orders').column('id', 'NUMBER').column('total', 'NUMBER');

  it('check columns of a known entity', () => {
    atlasGet(orders, { order_by: [{ column: 'total', direction: 'DESC' }] });
    getEntity(orders, { filters: [{ column: 'id', operator: 'EQUALS', value: 1 }] });
    // @ts-expect-error 'price' is not a column of orders
    atlasGet(orders, { order_by: [{ column: 'price', direction: 'DESC' }] });
    // @ts-expect-error lowercase direction
    atlasGet(orders, { order_by: [{ column: 'total', direction: 'desc' }] });
    // @ts-expect-error unknown operator
    getEntity(orders, { filters: [{ column: 'id', operator: 'EQ', value: 1 }] });
  });

  it('check the columns of aggregate reads', () => {
    getEntity(orders, {
      group_by: ['id'],
      aggregates: [{ function: 'sum', column: 'total', alias: 'sum_total' }],
    });
    // @ts-expect-error 'price' is not a column of orders
    getEntity(orders, { group_by: ['price'] });
    // @ts-expect-error 'median' is not an aggregate function
    getEntity(orders, { aggregates: [{ function: 'median', column: 'total', alias: 'm' }] });
    getEntity('orders', { group_by: ['anything'], order_by: [{ column: 'n', direction: 'DESC' }] });
  });

  it('accept any column for an entity given by name', () => {
    atlasGet('orders', { select_columns: [{ column: 'anything' }] });
    transform({ code_file: 't.js', inputs: ['orders', orders], outputs: ['totals'] });
  });
});

describe('step definitions', () => {
  it('take one step type with its own data block', () => {
    workflow('w').step('a', {
      type: 'request',
      request_data: { url: 'https://example.com' },
      retry: { attempts: 2 },
    });
    workflow('w').step('a', {
      type: 'l2',
      l2_data: { provider: 'p', module: 'm', action: 'a' },
      timeout_ms: 1000,
    });
  });

  it('reject a data block of another type, a missing block and an unknown type', () => {
    workflow('w').step('a', {
      type: 'l2',
      l2_data: { provider: 'p', module: 'm', action: 'a' },
      // @ts-expect-error an l2 step takes l2_data only, not request_data
      request_data: { url: 'https://example.com' },
    });
    // @ts-expect-error a request step needs request_data
    workflow('w').step('a', { type: 'request' });
    // @ts-expect-error there is no step type "lambda"
    workflow('w').step('a', { type: 'lambda', lambda_data: {} });
  });
});

describe('for_each steps', () => {
  const base = workflow('w')
    .input({ schema: { type: 'object', properties: { ids: { type: 'array' } } } })
    .step('customers', atlasGet('customers'));

  it('type the item inside the step and the counts and items after it', () => {
    const built = base
      .forEach('pdfs', 'customers.table', ({ ref }) => ({
        ...l2('platform', 'converters', 'create_pdf', { template: ref('item.name'), n: ref('item_index') }),
        concurrency: 4,
        on_error: 'continue',
        conditions: [{ data_path: 'item.active', value: true }],
      }))
      .forEach('again', 'input.ids', runWorkflow('child', { id: '{{item}}' }))
      .step('notify', ({ ref }) =>
        l2('chat', 'bot', 'send_message', {
          channel: 'c',
          message: `${ref('pdfs.succeeded')} made, first ${ref('pdfs.items[0].pdf_data')}`,
          total: ref('pdfs.items.length'),
          error: ref('pdfs.error.message'),
        }),
      );
    expectTypeOf(built.build().steps[1]!.for_each).toEqualTypeOf<string | undefined>();
  });

  it('reject the item outside a for_each step and an unknown list', () => {
    // @ts-expect-error the item exists only inside a for_each step
    base.step('a', ({ ref }) => l2('p', 'm', 'a', { x: ref('item.name') }));
    // @ts-expect-error 'orders' is not a step
    base.forEach('a', 'orders.table', l2('p', 'm', 'a'));
  });

  it('reject a path that does not fit the output of a for_each step', () => {
    const each = base.forEach('pdfs', 'customers.table', l2('p', 'm', 'a'));
    // @ts-expect-error a for_each output has items, succeeded, failed and skipped
    each.step('a', ({ ref }) => l2('p', 'm', 'a', { x: ref('pdfs.pdf_data') }));
    // @ts-expect-error a count has no fields
    each.output({ data: ({ ref }) => ({ x: ref('pdfs.failed.count') }) });
  });

  it('set for_each only through forEach, and on_error to fail or continue', () => {
    // @ts-expect-error for_each is set by forEach(), which types the item
    base.step('a', { ...l2('p', 'm', 'a'), for_each: '{{customers.table}}' });
    // @ts-expect-error on_error is "fail" or "continue"
    base.step('a', { ...l2('p', 'm', 'a'), on_error: 'ignore' });
    base.step('a', { ...l2('p', 'm', 'a'), on_error: 'continue' });
  });
});

describe('references written in step data', () => {
  it('accept steps added before, the input and its properties, with spaces inside the braces', () => {
    orderInput
      .step(
        'pdf',
        l2('platform', 'converters', 'create_pdf', {
          template: '{{check.body.table}}',
          amount: '{{ input.amount }}',
          line: 'row {{send.rows[0]}} for {{input.address.city}}',
          nested: { list: [{ whole: '{{check}}' }] },
        }),
      )
      .step(
        'read',
        getEntity('orders', { filters: [{ column: 'id', operator: 'EQUALS', value: '{{input.amount}}' }] }),
      )
      .step(
        'listed',
        atlasGet('orders', { filters: [{ column: 'id', operator: 'EQUALS', value: '{{pdf.n}}' }] }),
      )
      .step('write', writeEntity('orders', 'update', '{{read.body.table}}'))
      .step('rows', writeEntity('orders', 'append', [{ id: '{{input.amount}}', note: '{{pdf.url}}' }]))
      .step('call', request({ url: 'https://example.com/{{input.note}}', body: { at: '{{write.written}}' } }))
      .step('child', runWorkflow('invoice', { id: '{{call.body.id}}' }))
      .step(
        'ok',
        wait({ kind: 'approval', title: 'Order {{input.amount}}', assignees: { roles: ['manager'] } }),
      )
      .step('paid', wait({ kind: 'event', event: 'paid', match: { order: '{{input.amount}}' } }))
      .step('later', wait({ kind: 'timer', seconds: 60 }))
      .step('totals', transform({ code_file: 't.js', inputs: ['{{listed.table}}'], outputs: ['totals'] }));
  });

  it('are kept in the type of what the step helpers return', () => {
    expectTypeOf(l2('p', 'm', 'a', { x: '{{ read.body }} and {{input.id}}' })).toEqualTypeOf<
      StepDef<never, 'read.body' | 'input.id'>
    >();
    expectTypeOf(l2('p', 'm', 'a', { x: 'no reference', n: 1 })).toEqualTypeOf<StepDef<never, never>>();
  });

  it('reject a step name spelt wrong, in every step helper', () => {
    // @ts-expect-error 'raed' is not a step: 'read' was meant
    orderInput.step('x', l2('p', 'm', 'a', { rows: '{{raed.body.table}}' }));
    // @ts-expect-error 'chek' is not a step
    orderInput.step('x', l2('p', 'm', 'a', { deep: { list: ['{{chek.ok}}'] } }));
    const byNope = { filters: [{ column: 'id', operator: 'EQUALS', value: '{{nope.id}}' }] } as const;
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', getEntity('orders', byNope));
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', atlasGet('orders', byNope));
    // @ts-expect-error 'raed' is not a step
    orderInput.step('x', writeEntity('orders', 'update', '{{raed.body.table}}'));
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', writeEntity('orders', 'append', [{ id: '{{nope.id}}' }]));
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', request({ url: 'https://example.com/{{nope.path}}' }));
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', runWorkflow('invoice', { id: '{{nope.id}}' }));
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', wait({ kind: 'approval', title: '{{nope.title}}', assignees: { roles: ['m'] } }));
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', transform({ code_file: 't.js', inputs: ['{{nope.table}}'], outputs: ['totals'] }));
  });

  it('reject a step added after, and an input property the schema does not declare', () => {
    workflow('w')
      // @ts-expect-error 'later' is added after 'first'
      .step('first', l2('p', 'm', 'a', { x: '{{later.x}}' }))
      .step('later', l2('p', 'm', 'a'));
    // @ts-expect-error 'amout' is not an input property
    orderInput.step('x', l2('p', 'm', 'a', { x: '{{input.amout}}' }));
  });

  it('keep checking a step spread into a definition with more fields', () => {
    orderInput.step('x', { ...l2('p', 'm', 'a', { x: '{{check.ok}}' }), timeout_ms: 1000 });
    // @ts-expect-error 'nope' is not a step
    orderInput.step('x', { ...l2('p', 'm', 'a', { x: '{{nope.ok}}' }), timeout_ms: 1000 });
  });

  it('allow the item inside a for_each step only', () => {
    orderInput.forEach('each', 'input.tags', l2('p', 'm', 'a', { tag: '{{item}}', at: '{{item_index}}' }));
    // @ts-expect-error the item exists only inside a for_each step
    orderInput.step('x', l2('p', 'm', 'a', { tag: '{{item}}' }));
  });

  it('check the values of the workflow output', () => {
    orderInput.output({ data: { sent: '{{send.ok}}', list: ['{{input.tags}}'] } });
    // @ts-expect-error 'sned' is not a step
    orderInput.output({ data: { sent: '{{sned.ok}}' } });
  });

  it('leave text whose value is not known to the type checker to the engine', () => {
    const text: string = String(Date.now());
    orderInput.step('x', l2('p', 'm', 'a', { x: text, y: `{{${text}}}` }));
  });
});

describe('entity step helpers keep their key checks', () => {
  const orders = entity('orders').column('id', 'NUMBER').column('total', 'NUMBER');

  it('reject a row key that is not a column, and an operation key that is not one', () => {
    writeEntity(orders, 'append', [{ id: 1, total: '{{input.total}}' }]);
    // @ts-expect-error 'price' is not a column of orders
    writeEntity(orders, 'append', [{ id: 1, price: 2 }]);
    // @ts-expect-error 'filter' is not an operation key: 'filters'
    getEntity(orders, { filter: [] });
    // @ts-expect-error 'limit' is not an operation key: paging is the third argument
    atlasGet(orders, { filters: [], limit: 3 });
  });
});
