// A failed run found and retried in Chromium: an operator (runs.read and runs.retry, not an admin)
// signs in to the console over a few thousand stored runs, filters by status failed, opens the
// failed run, retries it from its failed step with the retry form, and the new run succeeds without
// running the steps before that step again (each step's executions are counted). The pages pass
// axe-core on the way.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/http/index.js';
import { serve, type RunningServer } from '../../src/node/index.js';
import { Engine, MemoryStorage, type ActionDefinition } from '../../src/index.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';
import { openPage, signIn } from './browser.js';

const chromiumPath = findTool(CHROMIUM);
const PASSWORD = 'correct horse battery staple';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Runs stored before the one that fails: a minute apart, ending an hour ago. */
const STORED = 3000;

interface AxeResult {
  violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
}

/** How often each step of `ledger` ran; `charge` fails while `failing` is set. */
const executions: Record<string, number> = {};
let failing = true;
const tally = {
  provider: 'acme',
  module: 'ledger',
  action: 'tally',
  input: z.object({ step: z.string() }),
  run: (input: { step: string }) => {
    executions[input.step] = (executions[input.step] ?? 0) + 1;
    if (input.step === 'charge' && failing) throw new Error('the card was declined');
    return { step: input.step, n: executions[input.step] };
  },
} satisfies ActionDefinition;

const step = (name: string) => ({
  name,
  type: 'l2' as const,
  l2_data: { provider: 'acme', module: 'ledger', action: 'tally', input_data: { step: name } },
});

async function checkAxe(page: Page, what: string) {
  await page.evaluate(AXE);
  const result = await page.evaluate(() =>
    (globalThis as unknown as { axe: { run(): Promise<AxeResult> } }).axe.run(),
  );
  const violations = result.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
  );
  expect(violations, what).toEqual([]);
}

describe.skipIf(chromiumPath === undefined)('retrying a failed run from the console in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let server: RunningServer;
  let engine: Engine;
  let failedId: string;

  beforeAll(async () => {
    const storage = new MemoryStorage();
    engine = new Engine({ storage, actions: [tally as unknown as ActionDefinition] });
    await engine.workflows.create({
      name: 'ledger',
      steps: [step('reserve'), step('charge'), step('receipt')],
      wires: [],
    });
    await engine.workflows.create({ name: 'import', steps: [step('load')], wires: [] });
    // Many runs, stored as their records are: every 20th failed (at charge, or an import).
    const end = Date.now() - 3_600_000;
    for (let i = 0; i < STORED; i++) {
      const started = new Date(end - (STORED - i) * 60_000).toISOString();
      const failed = i % 20 === 0;
      const workflow = i % 3 === 0 ? 'import' : 'ledger';
      await storage.put('runs', `stored-${String(i).padStart(5, '0')}`, {
        id: `stored-${String(i).padStart(5, '0')}`,
        workflow,
        status: failed ? 'failed' : 'succeeded',
        input: {},
        steps: [],
        started_at: started,
        finished_at: started,
        ...(failed
          ? {
              error: {
                code: 'step_failed',
                message: 'an older failure',
                step: workflow === 'ledger' ? 'charge' : 'load',
              },
            }
          : {}),
      });
    }
    const failed = await engine.run('ledger', {});
    expect(failed).toMatchObject({ status: 'failed', error: { step: 'charge' } });
    failedId = failed.id;
    expect(executions).toEqual({ reserve: 1, charge: 1 });

    await engine.access.put({
      roles: {
        operator: { grants: ['runs.read', 'runs.retry', 'runs.cancel', 'definitions.read', 'workflow.run'] },
      },
    });
    await engine.users.create({
      email: 'olga@example.com',
      name: 'Olga',
      roles: ['operator'],
      password: PASSWORD,
    });
    server = await serve(createHandler(engine));
    ({ browser, page } = await openPage(chromiumPath!));
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, `${server.url}/console`, 'olga@example.com', PASSWORD, '**/console/runs');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await engine?.close();
  });

  it('finds the failed run, retries it from its failed step, and the steps before it do not run again', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const rows = page.locator('table tbody tr');
    expect(await rows.count()).toBe(50);

    // Filter by status: a page of failed runs only, the newest (ours) first, older ones a page on.
    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await Promise.all([
      page.waitForURL('**/console/runs?*status=failed*'),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    expect(await rows.count()).toBe(50);
    const statuses = await rows.locator('td:nth-child(3)').allTextContents();
    expect(new Set(statuses)).toEqual(new Set(['failed']));
    expect(await rows.first().locator('td').first().textContent()).toBe(failedId);
    await expect.poll(() => page.getByRole('link', { name: 'Older runs' }).count()).toBe(1);
    await checkAxe(page, 'the runs filtered by status');

    // Open it: the error, and the retry form set to the step it failed at.
    await Promise.all([
      page.waitForURL(`**/console/runs/${failedId}`),
      page.getByRole('link', { name: failedId, exact: true }).click(),
    ]);
    expect(await page.locator('body').textContent()).toContain('the card was declined');
    const from = page.getByLabel('Retry from step');
    expect(await from.inputValue()).toBe('charge');
    await checkAxe(page, 'the failed run');

    // The card works now: retry from charge.
    failing = false;
    await Promise.all([
      page.waitForURL(
        (url) => /\/console\/runs\/[^/]+$/.test(url.pathname) && !url.pathname.endsWith(failedId),
      ),
      page.getByRole('button', { name: 'Retry', exact: true }).click(),
    ]);
    const newId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
    await expect
      .poll(() => page.locator('#run-status').textContent(), { timeout: 10_000 })
      .toContain('status succeeded');
    expect(await page.locator('body').textContent()).toContain(`retries ${failedId}`);
    await checkAxe(page, 'the retried run');

    const retried = await engine.getRun(newId);
    expect(retried).toMatchObject({ status: 'succeeded', retry_of: failedId });
    // reserve ran once, in the failed run; its output was reused.
    expect(executions).toEqual({ reserve: 1, charge: 2, receipt: 1 });
    expect(retried.steps.find((s) => s.name === 'reserve')?.output).toEqual({ step: 'reserve', n: 1 });
    expect((await engine.getRun(failedId)).status).toBe('failed');
    expect(errors).toEqual([]);
  }, 90_000);
});
