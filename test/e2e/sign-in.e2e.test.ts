// A signed-in team in a real browser: examples/app with its access.json, served beyond loopback,
// a sales person added with `stepwire users add`, who signs in, sees her customers only, saves one
// through the form (its session token included) and signs out.
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { openPage } from './browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inProcess, serveProcess, tempDir, type Served } from '../cli/helpers.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';

const chromiumPath = findTool(CHROMIUM);
const SHOTS = join(process.cwd(), 'test-artifacts', 'screens');
const temp = tempDir('sign-in-e2e');

describe.skipIf(chromiumPath === undefined)('signing in to examples/app in a real browser', () => {
  let browser: Browser;
  let served: Served;
  let page: Page;
  let app: string;
  let password: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    app = join(temp.dir, 'app');
    cpSync('examples/app', app, { recursive: true });
    const added = await inProcess([
      'users',
      'add',
      '--email',
      'ada@example.com',
      '--roles',
      'sales',
      '--dir',
      app,
    ]);
    expect(added.code).toBe(0);
    password = added.stdout.trim();
    served = await serveProcess([app, '--port', '0', '--host', '0.0.0.0'], 120_000);
    ({ browser, page } = await openPage(chromiumPath!));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    temp.remove();
  });

  it('signs in, sees only her customers, saves one, and signs out', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));

    await page.goto(`${served.url}/applications/invoices/screens/start`);
    await page.waitForURL('**/sign-in?next=*');
    await page.getByLabel('E-mail address').fill('ada@example.com');
    await page.getByLabel('Password').fill(password);
    await Promise.all([
      page.waitForURL('**/screens/start'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await page.screenshot({ path: join(SHOTS, 'sign-in-1-start.png'), fullPage: true });
    const grid = page.locator('tbody tr');
    expect(await page.locator('tbody tr', { hasText: 'Ada Lovelace' }).count()).toBe(1);
    expect(await page.locator('tbody tr', { hasText: 'Linus Torvalds' }).count()).toBe(1);
    expect(await page.locator('tbody tr', { hasText: 'Grace Hopper' }).count()).toBe(0);
    expect(await grid.first().textContent()).not.toContain('5000');

    await page.goto(`${served.url}/applications/invoices/screens/customer?id=1`);
    await page.getByLabel('City').fill('Cambridge');
    await Promise.all([
      page.waitForURL('**/screens/start?saved=1'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain(
      '1,Ada Lovelace,Cambridge',
    );

    await Promise.all([
      page.waitForURL('**/sign-in'),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    await page.goto(`${served.url}/applications/invoices/screens/start`);
    await page.waitForURL('**/sign-in?next=*');
    expect(errors).toEqual([]);
  });
});
