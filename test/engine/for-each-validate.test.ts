import { describe, expect, it } from 'vitest';
import { Engine, ValidationError, type Workflow } from '../../src/index.js';

/** A dummy step with `input_data` and any other fields. */
function dummy(name: string, input_data: Record<string, unknown>, fields: Record<string, unknown> = {}) {
  return {
    name,
    type: 'l2',
    l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
    ...fields,
  } as Workflow['steps'][number];
}

/** The issues of a definition as `code path: message`, or [] when it is valid. */
function issuesOf(steps: Workflow['steps'], wires: Workflow['wires'] = []): string[] {
  try {
    new Engine().workflows.validate({ name: 'w', steps, wires });
    return [];
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.issues.map((i) => `${i.code} ${i.path}: ${i.message}`);
  }
}

const list = dummy('list', { rows: [1, 2] });

describe('for_each when a workflow is created', () => {
  it('accepts item references in the data and conditions of a for_each step, and fitting references to its output', () => {
    expect(
      issuesOf([
        list,
        dummy(
          'each',
          { x: '{{item.x}}', i: '{{item_index}}', whole: '{{item}}' },
          {
            for_each: '{{list.rows}}',
            concurrency: 32,
            on_error: 'continue',
            conditions: [{ data_path: 'item.open', value: true }],
          },
        ),
        dummy('after', {
          a: '{{each.succeeded}}',
          b: '{{each.items[0].x}}',
          c: '{{each.items.length}}',
          d: '{{each.error.code}}',
          e: '{{each}}',
        }),
      ]),
    ).toEqual([]);
  });

  it('refuses item references outside a for_each step and in the for_each itself, naming the field', () => {
    expect(
      issuesOf([
        dummy('a', { x: '{{item.x}}' }, { conditions: [{ data_path: 'item_index', value: 0 }] }),
        dummy('b', { i: '{{item_index.n}}' }, { for_each: '{{item.rows}}' }),
      ]),
    ).toEqual([
      'invalid_reference steps[0].l2_data.input_data: reference {{item.x}} names the current item, which only the data and conditions of a for_each step have',
      'invalid_reference steps[0].conditions[0].data_path: reference {{item_index}} names the current item, which only the data and conditions of a for_each step have',
      'invalid_reference steps[1].l2_data.input_data: reference {{item_index.n}}: item_index is a number and has no fields',
      'invalid_reference steps[1].for_each: reference {{item.rows}} names the current item, which only the data and conditions of a for_each step have',
    ]);
  });

  it('still lets a step named "item" be referenced outside for_each steps', () => {
    expect(issuesOf([dummy('item', {}), dummy('b', { x: '{{item.x}}' })])).toEqual([]);
  });

  it('refuses references and wires that do not fit { items, succeeded, failed, skipped }', () => {
    const each = dummy('each', {}, { for_each: '{{list.rows}}' });
    expect(
      issuesOf(
        [
          list,
          each,
          dummy('after', { a: '{{each.pdf_data}}', b: '{{each.failed.n}}', c: '{{each.items.first}}' }),
          dummy('error', { e: '{{each.error.code}}' }),
        ],
        [{ source_name: 'each', source_data_path: 'rows', target_name: 'after' }],
      ),
    ).toEqual([
      'invalid_reference steps[2].l2_data.input_data: reference {{each.pdf_data}} does not fit the output of for_each step "each": "pdf_data" is not part of it; it has items, succeeded, failed and skipped',
      'invalid_reference steps[2].l2_data.input_data: reference {{each.failed.n}} does not fit the output of for_each step "each": "failed" is a count and has no fields',
      'invalid_reference steps[2].l2_data.input_data: reference {{each.items.first}} does not fit the output of for_each step "each": "items" is a list: use items[<index>] or items.length',
      'invalid_reference steps[3].l2_data.input_data: reference {{each.error.code}} does not fit the output of for_each step "each": "error" is not part of it; it has items, succeeded, failed and skipped',
      'invalid_reference wires[0].source_data_path: wire from "each" does not fit the output of for_each step "each": "rows" is not part of it; it has items, succeeded, failed and skipped',
    ]);
  });

  it('refuses a for_each that is not one reference, concurrency out of range or without for_each, and an unknown on_error', () => {
    const found = issuesOf([
      list,
      dummy('a', {}, { for_each: 'rows: {{list.rows}}' }),
      dummy('b', {}, { for_each: '{{list.rows}}', concurrency: 33 }),
      dummy('c', {}, { concurrency: 2 }),
      dummy('d', {}, { on_error: 'ignore' }),
    ]);
    expect(found.map((issue) => issue.split(':')[0])).toEqual([
      'invalid_reference steps[1].for_each',
      'too_big steps[2].concurrency',
      'invalid_value steps[4].on_error',
    ]);
    expect(found[0]).toContain('for_each must be exactly one reference');
    // Once the shape is right, the planner names a concurrency without for_each.
    expect(issuesOf([dummy('c', {}, { concurrency: 2 })])).toEqual([
      'invalid steps[0].concurrency: step "c": concurrency applies only to a for_each step',
    ]);
  });
});
