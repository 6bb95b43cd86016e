import { expect } from 'vitest';
import type { ScenarioResponse } from './scenario.js';

/**
 * Asserts what every runtime must answer to `SCENARIO`: the rules refused the bad write, the formula
 * was computed, the workflow ran and output these values.
 */
export function expectScenario(responses: ScenarioResponse[]): void {
  // The bodies are in the comparison so a failure shows why, e.g. the QuickJS wasm did not load.
  const statuses = responses.map(({ status, body }, i) =>
    status < 300 || i === 3 ? status : { status, body },
  );
  expect(statuses).toEqual([201, 201, 201, 400, 200, 200, 201, 201, 200]);
  // The rules: a write breaking them is refused whole, each broken rule named with its row and column.
  const refused = responses[3]!;
  expect(refused.type).toBe('application/problem+json');
  expect(refused.body.errors).toEqual([
    expect.objectContaining({ path: 'orders[1].customer_id' }),
    expect.objectContaining({
      code: 'check_failed',
      path: 'orders[1].amount',
      message: expect.stringContaining('an order is for more than nothing'),
    }),
  ]);
  expect(responses[4]!.body).toEqual({ written: 1 });
  // The formula, computed in the runtime: filtered and sorted on, read like a stored column.
  expect(responses[5]!.body.body.table.rows).toEqual([
    [10, 1, 100, 120],
    [12, 2, 80, 96],
    [11, 1, 75.5, 90.6],
    [14, 3, 5, 6],
  ]);
  const run = responses.at(-1)!.body;
  expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
  expect(run.output).toEqual({
    customer: 'Ada',
    written: 3,
    totals: [
      [1, 2, 175.5],
      [2, 1, 80],
      [3, 2, 7],
    ],
  });
  expect(run.steps.map((step: { name: string; logs?: string[] }) => [step.name, step.logs ?? []])).toEqual([
    ['customer', []],
    ['summarize', ['customers 3']],
    ['totals', []],
  ]);
}
