import { appendFileSync, cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveProcess, stepwire, tempDir, type Served } from './helpers.js';

const temp = tempDir('serve-triggers');
let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
  temp.remove();
});

interface RunsPage {
  runs: { id: string; status: string }[];
}

describe('triggers of a project folder', () => {
  it('stepwire triggers lists them with the next fire time', async () => {
    const listed = await stepwire(['triggers', 'examples/invoices']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /^weekly_invoice: schedule "0 9 \* \* 1" \(Europe\/London\), runs "invoice"; next \d{4}-\d\d-\d\dT/m,
    );
    expect(listed.stdout).toContain('order_added: entity "orders" created every 5 s, runs "order_added"');
  });

  it('stepwire serve runs them: an order added to the sheet file starts one order_added run', async () => {
    const dir = join(temp.dir, 'invoices');
    cpSync('examples/invoices', dir, { recursive: true });
    served = await serveProcess([dir, '--port', '0'], 120_000);
    expect(served.stdout()).toContain('trigger "order_added": entity "orders" created every 5 s');
    // Let the first poll record the rows that are there.
    await new Promise((r) => setTimeout(r, 2_000));
    const orders = join(dir, 'sheets/shop/orders.csv');
    const text = readFileSync(orders, 'utf8');
    appendFileSync(orders, `${text.endsWith('\n') ? '' : '\n'}900,1,Telescope,1200\n`);
    let page: RunsPage = { runs: [] };
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      const answer = await fetch(`${served.url}/runs?workflow=order_added`, {
        signal: AbortSignal.timeout(10_000),
      });
      page = (await answer.json()) as RunsPage;
      if (page.runs.some((r) => r.status === 'succeeded')) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(page.runs).toHaveLength(1);
    expect(page.runs[0]).toMatchObject({ status: 'succeeded' });
    // A run list shows summaries; the run's record, with its input, is at GET /runs/{id}.
    const record = await fetch(`${served.url}/runs/${page.runs[0]!.id}`, {
      signal: AbortSignal.timeout(10_000),
    });
    expect(await record.json()).toMatchObject({ input: { event: 'created', row: { order_id: 900 } } });
  }, 120_000);
});
