// Renders the pictures in docs/images from the real endpoints: it loads examples/invoices, serves its
// HTTP API on 127.0.0.1, runs the invoice workflow for a customer that does not exist (the run fails
// at the PDF step) and the open_invoices workflow (a for_each of child runs), and has Chromium
// screenshot GET /workflows/{name}/graph.svg, GET /runs/{id}/timeline.svg and GET /runs/{id}/page.
//
//   node scripts/with-node.mjs tsx scripts/docs-pictures.ts
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createHandler } from '../src/http/index.js';
import { loadProject, serve } from '../src/node/index.js';
import { CHROMIUM, findTool } from '../test/helpers/tools.js';

const OUT = join(import.meta.dirname, '..', 'docs', 'images');
const chromiumPath = findTool(CHROMIUM);
if (chromiumPath === undefined) throw new Error(`Chromium is needed: ${CHROMIUM.install}`);

const { engine } = await loadProject(join(import.meta.dirname, '..', 'examples', 'invoices'));
const server = await serve(createHandler(engine));
const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const start = async (workflow: string, input: unknown) => {
    const answer = await fetch(`${server.url}/workflows/${workflow}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    return (await answer.json()) as { id: string; status: string };
  };
  const run = await start('invoice', { customer_id: 99 });
  if (run.status !== 'failed') throw new Error(`the run was meant to fail, it ${run.status}`);
  const loop = await start('open_invoices', {});
  if (loop.status !== 'succeeded') throw new Error(`open_invoices ${loop.status}`);
  mkdirSync(OUT, { recursive: true });
  const page = await browser.newPage({ deviceScaleFactor: 1.5, viewport: { width: 1100, height: 900 } });
  for (const [path, file] of [
    ['/workflows/invoice/graph.svg', 'invoice-graph.png'],
    [`/runs/${run.id}/timeline.svg`, 'invoice-failed-run-timeline.png'],
    ['/workflows/open_invoices/graph.svg', 'open-invoices-graph.png'],
    [`/runs/${loop.id}/timeline.svg`, 'open-invoices-run-timeline.png'],
  ] as const) {
    const response = await page.goto(`${server.url}${path}`);
    if (response?.status() !== 200) throw new Error(`GET ${path} answered ${response?.status()}`);
    await page
      .locator('svg')
      .first()
      .screenshot({ path: join(OUT, file) });
    console.log(`wrote docs/images/${file} from GET ${path}`);
  }
  await page.goto(`${server.url}/runs/${run.id}/page`);
  await page.screenshot({ path: join(OUT, 'invoice-failed-run-page.png'), fullPage: true });
  console.log(`wrote docs/images/invoice-failed-run-page.png from GET /runs/${run.id}/page`);
} finally {
  await browser.close();
  await server.close();
}
