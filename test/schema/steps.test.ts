import { describe, expect, it } from 'vitest';
import { STEP_TYPES, StepSchema, WorkflowSchema, check } from '../../src/schema/index.js';

const l2Data = { provider: 'platform', module: 'dummy', action: 'dummy_task' };

function issuesOf(steps: unknown[]): Array<[string, string]> {
  const result = check(WorkflowSchema, { name: 'w', steps, wires: [] });
  return result.ok ? [] : result.issues.map((issue) => [issue.path, issue.code]);
}

describe('steps: a union on type', () => {
  it('lists every step type', () => {
    expect(STEP_TYPES).toEqual(['l2', 'atlas', 'request', 'wait']);
  });

  it('keeps a step of each type as written, without blocks of other types', () => {
    const step = { name: 'a', type: 'l2', l2_data: l2Data, retry: { attempts: 2 }, timeout_ms: 50 };
    expect(check(StepSchema, step)).toEqual({ ok: true, value: step });
  });

  it('checks the other fields of a step that lacks its data block', () => {
    expect(issuesOf([{ name: 'a.b', type: 'l2', retry: { attempts: 0 } }]).sort()).toEqual([
      ['steps[0].l2_data', 'required'],
      ['steps[0].name', 'invalid'],
      ['steps[0].retry.attempts', 'too_small'],
    ]);
  });

  it('checks its own block when it also carries a block of another type', () => {
    const step = { name: 'a', type: 'request', request_data: { url: '' }, l2_data: l2Data };
    expect(issuesOf([step]).sort()).toEqual([
      ['steps[0].l2_data', 'unexpected_data'],
      ['steps[0].request_data.url', 'too_small'],
    ]);
  });

  it('reports only the type of a step of an unknown type', () => {
    expect(issuesOf([{ name: 'a', type: 'lambda', l2_data: l2Data }])).toEqual([
      ['steps[0].type', 'invalid_value'],
    ]);
  });
});
