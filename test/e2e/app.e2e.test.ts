import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/index.js';
import { handleScreenRoute } from '../../src/http/screens.js';
import { appEngine } from '../app/helpers.js';
import { CHROMIUM, findTool } from '../helpers/tools.js';

const chromiumPath = findTool(CHROMIUM);
const SHOTS = join(process.cwd(), 'test-artifacts', 'screens');

const ROUTE = /^\/applications\/([^/]+)\/screens\/([^/]+)(?:\/forms\/([^/]+))?$/;

/** A tiny bridge from node:http to the fetch-style screen route. */
function serve(engine: Engine): Promise<{ server: Server; origin: string }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const match = ROUTE.exec(url.pathname);
      if (!match) {
        res.writeHead(404).end('not found');
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(key, value);
      const body = req.method === 'POST' ? Buffer.concat(chunks) : undefined;
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: req.method ?? 'GET',
        headers,
        ...(body ? { body } : {}),
      });
      const params = {
        app: decodeURIComponent(match[1]!),
        screen: decodeURIComponent(match[2]!),
        ...(match[3] ? { form: decodeURIComponent(match[3]) } : {}),
      };
      const response = await handleScreenRoute(engine, request, params, {});
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

describe.skipIf(chromiumPath === undefined)('application screens in a real browser', () => {
  let browser: Browser;
  let server: Server;
  let origin: string;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const { engine } = await appEngine();
    ({ server, origin } = await serve(engine));
    browser = await chromium.launch({
      executablePath: chromiumPath!,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await browser.newPage({ viewport: { width: 1024, height: 768 } });
    page.setDefaultTimeout(10_000);
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('submits a form, follows the redirect, pages a grid and goes back', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // the 422 of the invalid submit is expected; anything else (e.g. a CSP violation) is not
    page.on(
      'console',
      (m) => m.type() === 'error' && !m.text().includes('status of 422') && errors.push(m.text()),
    );

    await page.goto(`${origin}/applications/shop/screens/start`);
    expect(await page.title()).toBe('Find orders · shop');
    expect(await page.locator('main h1').textContent()).toBe('Find orders');
    await page.screenshot({ path: join(SHOTS, '1-start.png'), fullPage: true });

    // an invalid value: the workflow input wants customer_id >= 1. The field says so (min="1"), so the
    // browser would not send 0; without that attribute, the server refuses it too.
    expect(await page.getByLabel('Customer').getAttribute('min')).toBe('1');
    await page.getByLabel('Customer').evaluate((input) => input.removeAttribute('min'));
    await page.getByLabel('Customer').fill('0');
    await page.getByRole('button', { name: 'Submit' }).click();
    await page.waitForSelector('#f-lookup-0-error');
    expect(await page.locator('#f-lookup-0-error').textContent()).toBe('Customer must be at least 1, got 0');
    expect(await page.getByLabel('Customer').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('alert').isVisible()).toBe(true);
    expect(await page.getByLabel('Customer').inputValue()).toBe('0');
    await page.screenshot({ path: join(SHOTS, '2-start-error.png'), fullPage: true });

    await page.getByLabel('Customer').fill('2');
    await Promise.all([
      page.waitForURL('**/screens/orders?customer=2&count=15'),
      page.getByRole('button', { name: 'Submit' }).click(),
    ]);
    expect(await page.locator('main h1').textContent()).toBe('Orders of customer 2');
    expect(await page.getByText('15 orders found').isVisible()).toBe(true);
    expect(await page.locator('tbody tr').count()).toBe(20);
    expect(await page.locator('caption').textContent()).toBe('orders (page 1)');
    await page.screenshot({ path: join(SHOTS, '3-orders.png'), fullPage: true });

    await Promise.all([
      page.waitForURL('**/screens/orders?customer=2&count=15&grid_page=2'),
      page.getByRole('link', { name: 'Next' }).click(),
    ]);
    expect(await page.locator('tbody tr').first().locator('td').first().textContent()).toBe('21');
    expect(await page.locator('main h1').textContent()).toBe('Orders of customer 2');
    await page.screenshot({ path: join(SHOTS, '4-orders-page-2.png'), fullPage: true });

    await Promise.all([page.waitForURL(/grid_page=3$/), page.getByRole('link', { name: 'Next' }).click()]);
    expect(await page.locator('tbody tr').count()).toBe(5);
    expect(await page.locator('a[rel="next"]').count()).toBe(0);

    await Promise.all([
      page.waitForURL('**/screens/start'),
      page.getByRole('link', { name: 'Back to search' }).click(),
    ]);
    expect(await page.locator('main h1').textContent()).toBe('Find orders');
    expect(errors).toEqual([]);
  });
});
