import { expect } from 'vitest';
import type { ScenarioResponse } from './scenario.js';

/** Asserts what every runtime must answer to `SCENARIO`: the workflow ran and output these values. */
export function expectScenario(responses: ScenarioResponse[]): void {
  // The bodies are in the comparison so a failure shows why, e.g. the QuickJS wasm did not load.
  const statuses = responses.map(({ status, body }) => (status < 300 ? status : { status, body }));
  expect(statuses).toEqual([201, 201, 201, 201, 201, 200]);
  const run = responses.at(-1)!.body;
  expect({ status: run.status, error: run.error }).toEqual({ status: 'succeeded', error: null });
  expect(run.output).toEqual({
    customer: 'Ada',
    written: 3,
    totals: [
      [1, 2, 175.5],
      [2, 1, 80],
      [3, 1, 2],
    ],
  });
  expect(run.steps.map((step: { name: string; logs?: string[] }) => [step.name, step.logs ?? []])).toEqual([
    ['customer', []],
    ['summarize', ['customers 3']],
    ['totals', []],
  ]);
}
