// A run waits for approval across a restart of every process and goes on when a signed-in manager
// approves it in Chromium: examples/app copied, with an expense workflow that waits for a manager;
// `stepwire serve --no-work` and `stepwire worker` as child processes on the PostgreSQL server (a
// schema of their own); the run started through the API with a key, both processes killed with
// SIGKILL and started again; the manager (added with `stepwire users add`) signs in on the page,
// opens /approvals, follows the link to the approval and approves; the run then succeeds.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, inProcess, serveProcess, tempDir, type Served } from '../cli/helpers.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';
import { reachServer, testSchemas } from '../postgres/server.js';
import { openPage } from './browser.js';

const chromiumPath = findTool(CHROMIUM);
const url = await reachServer();
const schemas = testSchemas(url);
const SHOTS = join(process.cwd(), 'test-artifacts', 'screens');
const temp = tempDir('approvals-e2e');

/** An expense waits for a manager, then is paid with the decision. */
const expense = {
  name: 'expense',
  description: 'An expense a manager approves before it is paid',
  workflow_input: {
    name: 'input',
    input_schema: {
      type: 'object',
      properties: { what: { type: 'string' }, amount: { type: 'number' } },
      required: ['what', 'amount'],
    },
  },
  steps: [
    {
      name: 'approve',
      type: 'wait',
      wait_data: {
        kind: 'approval',
        title: 'Expense: {{input.what}}',
        description: 'Expenses need a manager',
        assignees: { roles: ['manager'] },
        show: { Amount: '{{input.amount}}' },
      },
    },
    {
      name: 'pay',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { approved: '{{approve.approved}}', by: '{{approve.decisions}}' },
      },
    },
  ],
  wires: [],
};

/** A running `stepwire worker`. */
interface WorkerProcess {
  ready: Promise<void>;
  kill(): Promise<void>;
}

/** Starts `stepwire worker <args>`; `ready` once it says it executes steps. */
function workerProcess(args: string[]): WorkerProcess {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'worker', ...args],
    { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const closed = new Promise<void>((done) => child.once('close', () => done()));
  const ready = new Promise<void>((done, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('executing steps')) done();
    });
    void closed.then(() => fail(new Error(`worker exited\n${stdout}\n${stderr}`)));
  });
  ready.catch(() => undefined);
  return {
    ready,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await closed;
    },
  };
}

describe.skipIf(chromiumPath === undefined || url === undefined)(
  'an approval decided in Chromium by a signed-in manager, across a restart of every process',
  () => {
    let browser: Browser | undefined;
    let page: Page;
    const running: { kill(): Promise<void> }[] = [];
    let app: string;
    let schema: string;
    let password: string;
    let megId: string;
    let key: string;

    beforeAll(async () => {
      mkdirSync(SHOTS, { recursive: true });
      app = join(temp.dir, 'app');
      cpSync('examples/app', app, { recursive: true });
      writeFileSync(join(app, 'workflows', 'expense.json'), JSON.stringify(expense, null, 2));
      schema = schemas.next();
      const db = ['--db', url!, '--schema', schema, '--dir', app];
      const added = await inProcess([
        'users',
        'add',
        '--email',
        'meg@example.com',
        '--roles',
        'manager',
        '--name',
        'Meg',
        ...db,
      ]);
      expect(added.code, added.stderr).toBe(0);
      password = added.stdout.trim();
      const listed = await inProcess(['users', 'list', '--json', ...db]);
      const users = JSON.parse(listed.stdout) as { id: string; email: string }[];
      megId = users.find((user) => user.email === 'meg@example.com')!.id;
      // The run is started by a program (a sales key), not by the manager who decides it.
      const made = await inProcess(['keys', 'create', '--name', 'expenses', '--roles', 'sales', ...db]);
      expect(made.code, made.stderr).toBe(0);
      key = made.stdout.trim();
      ({ browser, page } = await openPage(chromiumPath!));
    }, 180_000);

    afterAll(async () => {
      await browser?.close();
      for (const process of running.splice(0)) await process.kill();
      await schemas.drop();
      temp.remove();
    });

    /** serve (queueing only) and a worker, on the server database. */
    async function startAll(): Promise<Served> {
      const db = ['--db', url!, '--schema', schema];
      const worker = workerProcess([app, ...db, '--concurrency', '1']);
      running.push(worker);
      const served = await serveProcess([app, '--port', '0', ...db, '--no-work'], 120_000);
      running.push(served);
      await worker.ready;
      return served;
    }

    const api = (served: Served, path: string, init: RequestInit = {}) =>
      fetch(`${served.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        signal: AbortSignal.timeout(60_000),
      });

    it('waits, survives the restart, and succeeds once approved on the page', async () => {
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));

      let served = await startAll();
      const started = await api(served, '/workflows/expense/runs', {
        method: 'POST',
        body: JSON.stringify({ what: 'Train to Leeds', amount: 86.5 }),
      });
      expect(started.status).toBe(200);
      const run = (await started.json()) as {
        id: string;
        status: string;
        steps: { name: string; status: string }[];
      };
      expect(run.status).toBe('waiting');
      expect(run.steps.map((s) => [s.name, s.status])).toEqual([['approve', 'waiting']]);

      // Every process is killed, as a crash or a redeploy would, and started again.
      for (const process of running.splice(0)) await process.kill();
      served = await startAll();
      const still = await api(served, `/runs/${run.id}`);
      expect(((await still.json()) as { status: string }).status).toBe('waiting');

      // The manager signs in on the page and finds the approval in her inbox.
      await page.goto(`${served.url}/approvals`);
      await page.waitForURL('**/sign-in?next=*');
      await page.getByLabel('E-mail address').fill('meg@example.com');
      await page.getByLabel('Password').fill(password);
      await Promise.all([
        page.waitForURL('**/approvals'),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      await expect(page.getByRole('heading', { name: 'Approvals' }).count()).resolves.toBe(1);
      await page.screenshot({ path: join(SHOTS, 'approvals-1-inbox.png'), fullPage: true });
      await Promise.all([
        page.waitForURL('**/approvals/*'),
        page.getByRole('link', { name: 'Expense: Train to Leeds' }).click(),
      ]);
      expect(await page.getByRole('heading', { name: 'Expense: Train to Leeds' }).count()).toBe(1);
      const shown = await page.locator('body').textContent();
      expect(shown).toContain('Expenses need a manager');
      expect(shown).toContain('86.5');
      await page.getByLabel('Comment').fill('Fine, second class');
      await page.screenshot({ path: join(SHOTS, 'approvals-2-approval.png'), fullPage: true });
      const approvalUrl = page.url();
      await Promise.all([
        page.waitForURL(approvalUrl),
        page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      await page.screenshot({ path: join(SHOTS, 'approvals-3-approved.png'), fullPage: true });
      // Decided: the page shows it, and offers no decision again.
      expect(await page.locator('body').textContent()).toContain('Approved');
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);

      let record = { status: 'waiting', steps: [] as { name: string; status: string; output: unknown }[] };
      const deadline = Date.now() + 60_000;
      while (record.status !== 'succeeded' && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 200));
        record = (await (await api(served, `/runs/${run.id}`)).json()) as typeof record;
        if (record.status === 'failed') break;
      }
      expect(record.status).toBe('succeeded');
      expect(record.steps.map((s) => [s.name, s.status])).toEqual([
        ['approve', 'succeeded'],
        ['pay', 'succeeded'],
      ]);
      expect(record.steps[0]!.output).toMatchObject({
        approved: true,
        timed_out: false,
        decisions: [{ by: megId, approved: true, comment: 'Fine, second class' }],
      });
      expect((record.steps[1]!.output as { approved: boolean }).approved).toBe(true);
      expect(errors).toEqual([]);
    }, 240_000);
  },
);
