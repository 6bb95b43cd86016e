import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { openPage } from './browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveProcess, tempDir, type Served } from '../cli/helpers.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';

const chromiumPath = findTool(CHROMIUM);
const SHOTS = join(process.cwd(), 'test-artifacts', 'screens');
const temp = tempDir('example-app-e2e');

describe.skipIf(chromiumPath === undefined)('examples/app in a real browser', () => {
  let browser: Browser;
  let served: Served;
  let page: Page;
  let app: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    app = join(temp.dir, 'app');
    cpSync('examples/app', app, { recursive: true });
    // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
    rmSync(join(app, 'access.json'));
    served = await serveProcess([app, '--port', '0'], 120_000);
    ({ browser, page } = await openPage(chromiumPath!));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    temp.remove();
  });

  it('opens a customer, changes the city, saves, and sees the new city in the grid; the orders are theirs only', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));

    await page.goto(`${served.url}/applications/invoices/screens/start`);
    await page.getByLabel('Customer to open').fill('2');
    await Promise.all([
      page.waitForURL('**/screens/customer?id=2'),
      page.getByRole('button', { name: 'Submit' }).last().click(),
    ]);
    expect(await page.locator('main h1').textContent()).toBe('Customer 2');
    expect(await page.getByLabel('Name').inputValue()).toBe('Grace Hopper');
    expect(await page.getByLabel('City').inputValue()).toBe('Arlington, Virginia');
    // Only customer 2's orders: order 13.
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody tr td').first().textContent()).toBe('13');
    await page.screenshot({ path: join(SHOTS, 'example-1-customer.png'), fullPage: true });

    await page.getByLabel('City').fill('New York City');
    await Promise.all([
      page.waitForURL('**/screens/start?saved=2'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    const grace = page.locator('tbody tr', { hasText: 'Grace Hopper' });
    expect(await grace.locator('td').nth(2).textContent()).toBe('New York City');
    await page.screenshot({ path: join(SHOTS, 'example-2-saved.png'), fullPage: true });
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain(
      '2,Grace Hopper,New York City',
    );

    // The name is required by the form, and the browser would not even send it empty: the server says so too.
    await page.goto(`${served.url}/applications/invoices/screens/customer?id=2`);
    await page.getByLabel('Name').evaluate((input) => input.removeAttribute('required'));
    await page.getByLabel('Name').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('.field-error');
    expect(await page.locator('.field-error').first().textContent()).toBe('Name is required');
    expect(errors.filter((e) => !e.includes('status of 422'))).toEqual([]);
  });

  it("makes an invoice whose screen lists only that customer's orders", async () => {
    await page.goto(`${served.url}/applications/invoices/screens/start`);
    await page.getByLabel(/^Customer id/).fill('1');
    await Promise.all([
      page.waitForURL('**/screens/invoice?**'),
      page.getByRole('button', { name: 'Submit' }).first().click(),
    ]);
    const ids = await page.locator('tbody tr td:first-child').allTextContents();
    expect(ids).toEqual(['10', '11', '12']);
    await Promise.all([
      page.waitForURL('**/screens/customer?id=1'),
      page.getByRole('link', { name: 'Edit this customer' }).click(),
    ]);
    expect(await page.getByLabel('Name').inputValue()).toBe('Ada Lovelace');
  });
});
