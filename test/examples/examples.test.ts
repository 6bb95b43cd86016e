import { cpSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfText, serveProcess, stepwire, tempDir, type Served } from '../cli/helpers.js';

const temp = tempDir('examples');
afterAll(() => temp.remove());

describe('examples/invoices', () => {
  it('runs with one command: progress per step, output JSON, the PDF written to --out', async () => {
    const out = join(temp.dir, 'out');
    const result = await stepwire([
      'run',
      'examples/invoices',
      'invoice',
      '--input',
      '{"customer_id":1}',
      '--out',
      out,
    ]);
    expect(result.stderr).toMatch(/^▶ invoice \(run [\w-]+\)$/m);
    for (const step of ['customer', 'orders', 'pdf', 'upload', 'notify'])
      expect(result.stderr).toMatch(new RegExp(`^ {2}✓ ${step} +\\d+(\\.\\d)? m?s$`, 'm'));
    expect(result.stderr).toContain(
      'chat #billing: Invoice for Ada Lovelace is ready: memory://files/invoice-1.pdf',
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      file_url: 'memory://files/invoice-1.pdf',
      customer_name: 'Ada Lovelace',
      order_count: 3,
    });
    const pdf = readFileSync(join(out, 'invoice-1.pdf'));
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = pdfText(join(out, 'invoice-1.pdf'));
    if (text !== undefined) {
      expect(text).toContain('Invoice INV-2026-1');
      expect(text).toContain('Ada Lovelace');
      expect(text).toMatch(/Total +£179\.75/);
      expect(text).toContain('Page 1 of 1');
      expect(text).toContain('Desk, oak');
      expect(text).toContain('Notebook "Analytical"');
      expect(text).not.toContain('Chair');
    }
  });
});

describe('examples/invoices: open_invoices', () => {
  it('makes one PDF per customer with open orders in child runs and posts one message per PDF', async () => {
    const out = join(temp.dir, 'open');
    const result = await stepwire(['run', 'examples/invoices', 'open_invoices', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    for (const step of ['collect', 'batch', 'invoices'])
      expect(result.stderr).toMatch(new RegExp(`^ {2}✓ ${step} +\\d+(\\.\\d)? m?s$`, 'm'));
    // Two items run at once (concurrency 2), so the messages may come in either order.
    const messages = result.stderr.split('\n').filter((line) => line.startsWith('  chat #'));
    expect(messages.sort()).toEqual([
      '  chat #billing: Open invoice for Ada Lovelace is ready: memory://files/open-invoice-1.pdf',
      '  chat #billing: Open invoice for Linus Torvalds is ready: memory://files/open-invoice-3.pdf',
    ]);
    expect(JSON.parse(result.stdout)).toEqual({
      made: 2,
      failed: 0,
      invoices: [
        { customer_name: 'Ada Lovelace', file_url: 'memory://files/open-invoice-1.pdf', order_count: 2 },
        { customer_name: 'Linus Torvalds', file_url: 'memory://files/open-invoice-3.pdf', order_count: 1 },
      ],
    });
    expect(readdirSync(out).sort()).toEqual(['open-invoice-1.pdf', 'open-invoice-3.pdf']);
    const text = pdfText(join(out, 'open-invoice-1.pdf'));
    if (text !== undefined) {
      expect(text).toContain('Open invoice for Ada Lovelace');
      expect(text).toContain('Desk, oak');
      expect(text).not.toContain('Notebook');
    }
  });
});

describe('examples/summary', () => {
  it('runs the transform with one command and outputs the totals it appended', async () => {
    const result = await stepwire([
      'run',
      'examples/summary',
      'summarize_orders',
      '--out',
      join(temp.dir, 'none'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^ {4}summarize: summarized 3 customers$/m);
    expect(result.stderr).toMatch(/✓ summarize .*\n.*✓ totals /);
    const output = JSON.parse(result.stdout);
    expect(output.rows_written).toBe(3);
    expect(output.totals.rows).toEqual([
      [1, 3, 179.75],
      [2, 1, 80],
      [3, 1, 2],
    ]);
    expect(existsSync(join(temp.dir, 'none'))).toBe(false);
  });
});

describe('examples/app with stepwire serve', () => {
  let served: Served;
  const out = join(temp.dir, 'served');
  beforeAll(async () => {
    // A copy: serve keeps its database and the sheets' rows in the project folder.
    const app = join(temp.dir, 'app');
    cpSync('examples/app', app, { recursive: true });
    // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
    rmSync(join(app, 'access.json'));
    served = await serveProcess([app, '--port', '0', '--out', out]);
  });
  afterAll(async () => {
    await served?.stop();
  });

  it('prints the URL and the app screen URLs, and serves the API', async () => {
    expect(served.stdout()).toContain(`app "invoices": ${served.url}/applications/invoices/screens/start`);
    const response = await fetch(`${served.url}/catalog/entities`, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { name: string }[]).map((e) => e.name)).toEqual([
      'customers',
      'orders',
    ]);
  });

  it('shows the start screen, runs the form and redirects to the invoice screen; the PDF is served and written', async () => {
    const start = await fetch(`${served.url}/applications/invoices/screens/start`, {
      signal: AbortSignal.timeout(10_000),
    });
    expect(start.status).toBe(200);
    const html = await start.text();
    expect(html).toContain('<h2>Make an invoice</h2>');
    expect(html).toContain('Grace Hopper');

    const submit = await fetch(`${served.url}/applications/invoices/screens/start/forms/make`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: served.url },
      body: 'customer_id=2',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(submit.status).toBe(303);
    const location = new URL(submit.headers.get('location')!, served.url);
    expect(location.pathname).toBe('/applications/invoices/screens/invoice');
    const file = `${served.url}/files/invoice-2.pdf`;
    expect(Object.fromEntries(location.searchParams)).toEqual({
      customer: '2',
      name: 'Grace Hopper',
      orders: '1',
      file,
    });

    const screen = await (await fetch(location, { signal: AbortSignal.timeout(10_000) })).text();
    expect(screen).toContain('Invoice for Grace Hopper');
    expect(screen).toContain(`The PDF is at ${file}`);
    expect(screen).toContain('Make another invoice');
    // The grid lists customer 2's one order (13) only, not customer 1's orders 10 to 12.
    expect([...screen.matchAll(/<tr[^>]*><td class="num"[^>]*>(\d+)<\/td>/g)].map((m) => m[1])).toEqual([
      '13',
    ]);

    const pdf = await fetch(file, { signal: AbortSignal.timeout(10_000) });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(readFileSync(join(out, 'invoice-2.pdf'))).toEqual(bytes);
    expect((await fetch(`${served.url}/files/nothing.pdf`)).status).toBe(404);

    expect(served.stderr()).toMatch(/^GET \/catalog\/entities 200 \d+(\.\d)? m?s$/m);
    expect(served.stderr()).toMatch(/^POST \/applications\/invoices\/screens\/start\/forms\/make 303 /m);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    expect(await served.stop()).toBe(0);
  });
});
