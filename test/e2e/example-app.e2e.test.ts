// examples/app in a real browser, served by `stepwire serve`, clicked through without typing any id:
// the customer list is searched, sorted and opened by its row links; an invoice and an order pick the
// customer by name; the dashboard shows a metric and charts; every screen passes axe-core (no serious
// or critical violation) at 1280 and 390 px wide without scrolling sideways, and the back button
// returns to each state (it is all in the address). Screenshots land in test-artifacts/screens.
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { openPage } from './browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveProcess, tempDir, type Served } from '../cli/helpers.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';

const chromiumPath = findTool(CHROMIUM);
const SHOTS = join(process.cwd(), 'test-artifacts', 'screens');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const temp = tempDir('example-app-e2e');

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
}

describe.skipIf(chromiumPath === undefined)('examples/app in a real browser', () => {
  let browser: Browser;
  let served: Served;
  let page: Page;
  let app: string;
  const errors: string[] = [];
  const screen = (path: string) => `${served.url}/applications/invoices/screens/${path}`;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    app = join(temp.dir, 'app');
    cpSync('examples/app', app, { recursive: true });
    // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
    rmSync(join(app, 'access.json'));
    served = await serveProcess([app, '--port', '0'], 120_000);
    ({ browser, page } = await openPage(chromiumPath!));
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    temp.remove();
  });

  /** The names in the customer grid, top to bottom. */
  const customerNames = () => page.locator('table.grid tbody tr td:nth-child(2)').allTextContents();

  it('finds a customer by search, sorts, opens it by its row link and saves a new city', async () => {
    await page.goto(screen('start'));
    expect(await customerNames()).toEqual(['Ada Lovelace', 'Grace Hopper', 'Linus Torvalds']);
    expect(await page.locator('.pager .status').textContent()).toBe('Rows 1–3 of 3');

    await page.getByRole('searchbox', { name: 'Search customers' }).fill('Hopper');
    await Promise.all([
      page.waitForURL('**/screens/start?customers_q=Hopper'),
      page.getByRole('button', { name: 'Search' }).click(),
    ]);
    expect(await customerNames()).toEqual(['Grace Hopper']);

    // Sorting keeps the search; the header says how it is sorted.
    await page.goto(screen('start'));
    await page.getByRole('link', { name: /^Total/ }).click();
    await page.waitForURL('**customers_sort=order_total**');
    await page.getByRole('link', { name: /^Total/ }).click();
    await page.waitForURL('**customers_dir=desc**');
    expect(await page.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('descending');
    expect(await customerNames()).toEqual(['Ada Lovelace', 'Grace Hopper', 'Linus Torvalds']);
    // The back button returns to the ascending order: every state is in the address.
    await page.goBack();
    await page.waitForURL(/customers_dir=asc/);
    expect(await page.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('ascending');
    expect(await customerNames()).toEqual(['Linus Torvalds', 'Grace Hopper', 'Ada Lovelace']);
    await page.screenshot({ path: join(SHOTS, 'example-1-customers.png'), fullPage: true });

    // The key cell is a real link.
    await Promise.all([
      page.waitForURL('**/screens/customer?id=2'),
      page.getByRole('link', { name: '2', exact: true }).click(),
    ]);
    expect(await page.locator('main h1').textContent()).toBe('Customer 2');
    expect(await page.getByLabel('Name').inputValue()).toBe('Grace Hopper');
    expect(await page.locator('table.grid tbody tr td:first-child').allTextContents()).toEqual(['13']);
    await page.getByLabel('City').fill('New York City');
    await Promise.all([
      page.waitForURL('**/screens/start?saved=2'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    const grace = page.locator('tbody tr', { hasText: 'Grace Hopper' });
    expect(await grace.locator('td').nth(2).textContent()).toBe('New York City');
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain(
      '2,Grace Hopper,New York City',
    );
  }, 60_000);

  it('makes an invoice for a customer picked by name', async () => {
    await page.goto(screen('start'));
    await page
      .getByRole('combobox', { name: 'Customer', exact: true })
      .selectOption({ label: 'Ada Lovelace' });
    await Promise.all([
      page.waitForURL('**/screens/invoice?**'),
      page.getByRole('button', { name: 'Submit' }).first().click(),
    ]);
    expect(await page.locator('main h1').textContent()).toBe('Invoice for Ada Lovelace');
    expect(await page.locator('table.grid tbody tr td:first-child').allTextContents()).toEqual([
      '10',
      '11',
      '12',
    ]);
    // Money as money, dates as dates.
    expect(await page.locator('table.grid tbody tr').nth(1).textContent()).toContain('$150.50');
    expect(await page.locator('table.grid tbody tr').nth(1).textContent()).toContain('Aug 14, 2026');
  }, 60_000);

  it('records an order for a customer picked by name, numbered for them; the dashboard counts it', async () => {
    await page.goto(screen('dashboard'));
    const openInvoices = page
      .locator('.c-metric', { has: page.getByText('Open invoices', { exact: true }) })
      .locator('.metric-value');
    expect(await openInvoices.textContent()).toBe('2');

    await Promise.all([
      page.waitForURL('**/screens/orders'),
      page.getByRole('link', { name: 'Orders' }).click(),
    ]);
    expect(await page.getByRole('link', { name: 'Orders' }).getAttribute('aria-current')).toBe('page');
    await page
      .getByRole('combobox', { name: 'Customer', exact: true })
      .selectOption({ label: 'Grace Hopper' });
    await page.getByLabel('Item').fill('Standing desk');
    await page.getByLabel('Amount').fill('420');
    await page.getByLabel('Placed on').fill('2026-11-02');
    await page.getByLabel('Status').selectOption({ label: 'Open' });
    await Promise.all([
      page.waitForURL('**/screens/orders?customer=2'),
      page.getByRole('button', { name: 'Submit' }).click(),
    ]);
    const added = page.locator('table.grid tbody tr', { hasText: 'Standing desk' });
    expect(await added.textContent()).toContain('Grace Hopper');
    expect(await added.textContent()).toContain('$420.00');
    // Numbered one after the largest order number, by the add_order workflow's aggregate read.
    expect(readFileSync(join(app, 'sheets/shop/orders.csv'), 'utf8')).toContain(
      '15,2,Standing desk,420,2026-11-02,open',
    );

    await Promise.all([
      page.waitForURL('**/screens/dashboard'),
      page.getByRole('link', { name: 'Dashboard' }).click(),
    ]);
    expect(await openInvoices.textContent()).toBe('3');
    const months = page.locator('figure', { hasText: 'Sales by month' }).locator('tbody th');
    expect(await months.allTextContents()).toEqual(['2026-07', '2026-08', '2026-09', '2026-10', '2026-11']);
    expect(await page.locator('figure svg[role="img"]').count()).toBe(2);
  }, 60_000);

  it('passes axe-core on every screen at 1280 and 390 px, without scrolling sideways', async () => {
    await page.goto(screen('start'));
    await page
      .getByRole('combobox', { name: 'Customer', exact: true })
      .selectOption({ label: 'Grace Hopper' });
    await Promise.all([
      page.waitForURL('**/screens/invoice?**'),
      page.getByRole('button', { name: 'Submit' }).first().click(),
    ]);
    const invoice = page.url().slice(screen('').length);
    const paths = [
      'start',
      'start?customers_q=a&customers_sort=name',
      'customer?id=1',
      'orders',
      'dashboard',
      invoice,
    ];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const path of paths) {
        const answer = await page.goto(screen(path));
        expect(answer?.status(), path).toBe(200);
        await page.evaluate(AXE);
        const result = await page.evaluate(() =>
          (globalThis as unknown as { axe: { run(): Promise<AxeResult> } }).axe.run(),
        );
        const violations = result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map(
            (v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
          );
        expect(violations, `${path} at ${width} px`).toEqual([]);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(wide, `${path} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
        const name = path.replace(/\?.*$/, '');
        if (!path.includes('customers_q'))
          await page.screenshot({ path: join(SHOTS, `example-${name}-${width}.png`), fullPage: true });
      }
    }
    expect(errors.filter((e) => !e.includes('status of 422'))).toEqual([]);
  }, 120_000);
});
