import type { Workflow } from '../../src/index.js';

/** A step name with markup in it: pictures must show it as text. */
export const MARKUP_NAME = '<b>"Tom & Jerry"</b>';

const l2 = (name: string, input_data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data },
  ...extra,
});

/**
 * 30 steps: a read, a fan-out of ten checks, a chain of twelve, a step per item (for_each with
 * on_error), conditions, wires, a request and a step whose name holds markup.
 */
export function thirtySteps(): Workflow {
  const steps: Record<string, unknown>[] = [l2('read', { id: '{{input.id}}' })];
  for (let i = 1; i <= 10; i++) steps.push(l2(`check_${i}`, { row: `{{read.rows[${i}]}}` }));
  steps.push(
    l2('merge', { a: '{{check_1.ok}}', b: '{{check_2.ok}}', c: '{{check_3.ok}}' }),
    l2(
      'each_invoice',
      { invoice: '{{item.id}}', at: '{{item_index}}' },
      {
        for_each: '{{read.rows}}',
        concurrency: 4,
        on_error: 'continue',
      },
    ),
  );
  let previous = 'merge';
  for (let i = 1; i <= 12; i++) {
    const name = `stage_${i}`;
    steps.push(
      l2(
        name,
        { from: `{{${previous}.value}}` },
        i % 4 === 0 ? { conditions: [{ data_path: '{{read.kind}}', value: 'big' }] } : {},
      ),
    );
    previous = name;
  }
  steps.push(
    {
      name: 'notify',
      type: 'request',
      request_data: {
        url: 'https://hooks.example.com/{id}',
        method: 'post',
        path_params: { id: '{{input.id}}' },
      },
      retry: { attempts: 3 },
    },
    l2(
      MARKUP_NAME,
      { done: '{{stage_12.value}}', items: '{{each_invoice.succeeded}}' },
      { on_error: 'continue' },
    ),
    l2('a_step_with_a_rather_long_name_that_will_not_fit_in_its_box', { x: '{{check_10.ok}}' }),
    l2('audit', {}),
    l2('archive', { status: '{{notify.status}}' }),
  );
  return {
    name: 'thirty',
    steps: steps as unknown as Workflow['steps'],
    wires: [
      { source_name: 'check_4', target_name: 'merge', target_data_path: 'd' },
      { source_name: 'input', source_data_path: 'id', target_name: 'audit', target_data_path: 'id' },
      {
        source_name: 'each_invoice',
        source_data_path: 'failed',
        target_name: 'audit',
        target_data_path: 'failed',
      },
    ],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { id: { type: 'integer' } } },
    },
    workflow_output: {
      name: 'result',
      output_data: { audit: '{{audit}}', final: `{{${MARKUP_NAME}.done}}` },
    },
  };
}
