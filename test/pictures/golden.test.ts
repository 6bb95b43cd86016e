// The pictures as they were last looked at: a change to the drawing shows up here as a diff of the
// golden file. After looking at the new picture, accept it with `npx vitest run test/pictures -u`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runTimelineSvg, runTimelineText, workflowGraphSvg, type Workflow } from '../../src/index.js';
import { failedRun } from './runs.js';
import { thirtySteps } from './workflows.js';

const invoice = JSON.parse(readFileSync('examples/invoices/workflows/invoice.json', 'utf8')) as Workflow;

describe('golden pictures', () => {
  it('the invoice workflow', async () => {
    await expect(workflowGraphSvg(invoice)).toMatchFileSnapshot('./golden/invoice-graph.svg');
  });

  it('a workflow of 30 steps with conditions, for_each, on_error and wires', async () => {
    await expect(workflowGraphSvg(thirtySteps())).toMatchFileSnapshot('./golden/thirty-steps-graph.svg');
  });

  it('a failed run', async () => {
    await expect(runTimelineSvg(failedRun())).toMatchFileSnapshot('./golden/failed-run-timeline.svg');
    await expect(`${runTimelineText(failedRun())}\n`).toMatchFileSnapshot('./golden/failed-run-timeline.txt');
  });
});
