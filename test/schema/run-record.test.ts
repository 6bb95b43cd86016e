import { describe, expect, it } from 'vitest';
import { RUN_STATUSES, RunRecordSchema, check, type Workflow } from '../../src/schema-entry.js';
import { shopEngine } from '../engine/helpers.js';
import { failingWorkflow, lookupWorkflow } from '../http/helpers.js';

const skipping: Workflow = {
  name: 'skips',
  steps: [
    {
      name: 'never',
      type: 'l2',
      conditions: [{ data_path: 'input.go', value: true }],
      l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
    },
  ],
  wires: [],
};

describe('RunRecordSchema', () => {
  it('accepts the records the engine keeps, exactly: nothing is dropped when parsed', async () => {
    const { engine } = await shopEngine();
    const records = [];
    for (const workflow of [lookupWorkflow, failingWorkflow, skipping]) {
      await engine.workflows.create(workflow);
      const record = await engine.run(workflow.name, { id: 2, go: false });
      records.push(record, await engine.getRun(record.id));
    }
    expect(records.map((r) => r.status)).toEqual([
      'succeeded',
      'succeeded',
      'failed',
      'failed',
      'succeeded',
      'succeeded',
    ]);
    expect(records[4]!.steps.map((s) => s.status)).toEqual(['skipped']);
    for (const record of records) {
      const parsed = check(RunRecordSchema, record);
      expect(parsed.ok ? [] : parsed.issues).toEqual([]);
      if (parsed.ok) expect(parsed.value).toEqual(record);
    }
  });

  it('names the field that is wrong', () => {
    const result = check(RunRecordSchema, {
      id: 'r',
      workflow: 'w',
      status: 'done',
      input: {},
      output: null,
      error: { code: 'x' },
      started_at: 'now',
      finished_at: null,
      steps: [
        {
          name: 's',
          status: 'running',
          attempts: -1,
          started_at: null,
          finished_at: null,
          output: null,
          error: null,
        },
      ],
    });
    expect(result.ok ? [] : result.issues.map((i) => i.path).sort()).toEqual([
      'error.message',
      'status',
      'steps[0].attempts',
    ]);
  });

  it('lists queued and waiting among the run statuses', () => {
    expect(RUN_STATUSES).toEqual([
      'queued',
      'running',
      'waiting',
      'succeeded',
      'failed',
      'cancelled',
      'interrupted',
    ]);
  });
});
