// The operator console in Chromium: an admin of examples/app signs in, every console page passes
// axe-core at 1280 and 390 px wide without scrolling sideways, a waiting run's page follows the run
// live over its event stream (no reload) once the approval is decided, and the waiting runs of a
// workflow are cancelled in bulk after the count is shown.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { loadProject, serve, type RunningServer } from '../../src/node/index.js';
import type { Engine } from '../../src/index.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';
import { openPage, signIn } from './browser.js';

const chromiumPath = findTool(CHROMIUM);
const PASSWORD = 'correct horse battery staple';
const SHOTS = join(process.cwd(), 'test-artifacts', 'screens');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
}

describe.skipIf(chromiumPath === undefined)('the operator console in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let server: RunningServer;
  let engine: Engine;
  let runId: string;
  let waitingId: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ({ engine } = await loadProject('examples/app'));
    await engine.users.create({
      email: 'ada@example.com',
      name: 'Ada',
      roles: ['admin'],
      password: PASSWORD,
    });
    await engine.workflows.create({
      name: 'echo',
      workflow_input: {
        name: 'input',
        input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      steps: [
        {
          name: 'first',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'dummy',
            action: 'dummy_task',
            input_data: { text: '{{input.text}}' },
          },
        },
      ],
      wires: [],
    });
    await engine.workflows.create({
      name: 'approve_it',
      steps: [
        {
          name: 'ok',
          type: 'wait',
          wait_data: { kind: 'approval', title: 'Keep it?', assignees: { roles: ['admin'] } },
        },
      ],
      wires: [],
    });
    await engine.triggers.create({
      name: 'nightly',
      type: 'schedule',
      workflow_name: 'echo',
      input_data: { text: 'night' },
      schedule_data: { cron: '30 2 * * *' },
    });
    runId = (await engine.run('echo', { text: '<script>alert(1)</script> a long value '.repeat(20) })).id;
    waitingId = (await engine.run('approve_it', {})).id;
    server = await serve(createHandler(engine));
    ({ browser, page } = await openPage(chromiumPath!));
    await signIn(page, `${server.url}/console`, 'ada@example.com', PASSWORD, '**/console/runs');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.close();
  });

  it('passes axe-core on every page at 1280 and 390 px, without sideways scrolling', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const paths = [
      '/console/runs',
      `/console/runs/${runId}`,
      `/console/runs/${waitingId}`,
      '/console/workflows',
      '/console/workflows/echo',
      '/console/approvals',
      '/console/triggers',
      '/console/queue',
      '/console/audit',
    ];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const path of paths) {
        const answer = await page.goto(`${server.url}${path}`);
        expect(answer?.status(), path).toBe(200);
        expect(await page.locator('nav[aria-label="Console"] a').count(), path).toBe(6);
        await page.evaluate(AXE);
        const result = await page.evaluate(() =>
          (globalThis as unknown as { axe: { run(): Promise<AxeResult> } }).axe.run(),
        );
        const violations = result.violations.map(
          (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
        );
        expect(violations, `${path} at ${width} px`).toEqual([]);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(wide, `${path} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
        if (path === '/console/runs' || path === `/console/runs/${runId}`)
          await page.screenshot({
            path: join(SHOTS, `console-${path === '/console/runs' ? 'runs' : 'run'}-${width}.png`),
            fullPage: true,
          });
      }
    }
    // The input was shown as text, never run.
    expect(errors).toEqual([]);
  }, 120_000);

  it('follows a waiting run live: its page shows the end once the approval is decided', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.url}/console/runs/${waitingId}`);
    await expect.poll(() => page.locator('#run-status').textContent()).toContain('status waiting');
    // Let the script open the stream before the run goes on.
    await page.waitForTimeout(500);
    const approval = (await engine.getRun(waitingId)).steps[0]!.wait!.id;
    await engine
      .as({ id: 'boss', kind: 'user', roles: ['admin'] })
      .approvals.decide(approval, { approved: true });
    await expect
      .poll(() => page.locator('#run-status').textContent(), { timeout: 10_000 })
      .toContain('status succeeded');
    // The whole page was redrawn: the cancel button gave way to the retry form.
    await expect.poll(() => page.getByRole('button', { name: 'Retry' }).count()).toBe(1);
  }, 60_000);

  it('cancels the waiting runs of a workflow in bulk after showing how many', async () => {
    const waiting = [(await engine.run('approve_it', {})).id, (await engine.run('approve_it', {})).id];
    await page.goto(`${server.url}/console/runs`);
    await page.getByLabel('Workflow', { exact: true }).selectOption('approve_it');
    await page.getByLabel('Status', { exact: true }).selectOption('waiting');
    await Promise.all([
      page.waitForURL('**/console/runs?*'),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    await page.getByRole('button', { name: 'Cancel these runs…' }).click();
    await page.getByRole('button', { name: 'Cancel 2 runs' }).waitFor();
    for (const id of waiting) expect((await engine.getRun(id)).status).toBe('waiting');
    await Promise.all([
      page.waitForURL('**/console/runs?*acted=cancel*'),
      page.getByRole('button', { name: 'Cancel 2 runs' }).click(),
    ]);
    expect(await page.getByRole('status').first().textContent()).toContain(
      'Cancelled 2 of the 2 runs counted.',
    );
    for (const id of waiting) expect((await engine.getRun(id)).status).toBe('cancelled');
  }, 60_000);
});
