/**
 * Requests per second of `POST /catalog/entities/{name}/read` through the Node server (`serve`),
 * compared with the same read called in-process (`engine.catalog.getEntity`), in the same run.
 * Load is bounded: a fixed number of requests from a few concurrent keep-alive clients on 127.0.0.1.
 * Run directly with `npx tsx bench/http.ts`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { serve } from '../src/node/serve.js';
import { createHandler } from '../src/http/index.js';
import { Engine, MemorySpreadsheets, type Entity } from '../src/index.js';
import { checkEqual, sized } from './util.js';

const REQUESTS = sized(5_000, 40);
const CONCURRENCY = 16;
const ROWS = 200;

const entity: Entity = {
  name: 'orders',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'customer', type: 'NUMBER' },
    { name: 'item', type: 'STRING' },
    { name: 'amount', type: 'NUMBER' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};

const body = {
  operation: {
    filters: [{ column: 'customer', operator: 'EQUALS' as const, value_type: 'NUMBER' as const, value: 7 }],
    order_by: [{ column: 'amount', direction: 'DESC' as const }],
  },
  page_size: 10,
  page_number: 1,
};

async function timed(
  label: string,
  count: number,
  concurrency: number,
  once: () => Promise<void>,
): Promise<number> {
  for (let i = 0; i < sized(200, 5); i++) await once(); // warm up
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) await once();
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const perSecond = count / seconds;
  console.log(
    `${label.padEnd(34)} ${count} calls in ${seconds.toFixed(2)} s = ${Math.round(perSecond).toLocaleString('en-US')} /s`,
  );
  return perSecond;
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const cells: (string | number)[][] = [['id', 'customer', 'item', 'amount']];
  for (let i = 1; i <= ROWS; i++) cells.push([i, i % 20, `item ${i}`, (i * 37) % 500]);
  const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ shop: { orders: cells } }) });
  await engine.catalog.registerEntity(entity);
  const server = await serve(createHandler(engine), { port: 0 });
  const url = `${server.url}/catalog/entities/orders/read`;
  const payload = JSON.stringify(body);
  try {
    console.log(
      `http read bench: ${ROWS}-row entity, filter + order + page of 10, ${REQUESTS} requests at concurrency ${CONCURRENCY}`,
    );
    // The page the read must answer: customer 7's orders by amount, highest first, the first 10.
    const expected = cells
      .slice(1)
      .filter((row) => row[1] === 7)
      .sort((a, b) => (b[3] as number) - (a[3] as number) || (a[0] as number) - (b[0] as number))
      .slice(0, 10);
    const direct = await engine.catalog.getEntity({ entity_name: 'orders', ...body });
    checkEqual(direct.body.table.rows, expected, 'the in-process read answers the page');
    const answer = await fetch(url, {
      method: 'POST',
      body: payload,
      headers: { 'content-type': 'application/json' },
    });
    checkEqual(answer.status, 200, 'the HTTP read answers 200');
    checkEqual(
      await answer.json(),
      JSON.parse(JSON.stringify(direct)),
      'the HTTP read answers as the in-process one',
    );
    const inProcess = await timed('in-process engine.catalog.getEntity', REQUESTS, CONCURRENCY, async () => {
      const out = await engine.catalog.getEntity({ entity_name: 'orders', ...body });
      if (out.body.error?.is_error) throw new Error(out.body.error.errors?.join('; '));
    });
    const overHttp = await timed('HTTP POST /catalog/entities/…/read', REQUESTS, CONCURRENCY, async () => {
      const response = await fetch(url, {
        method: 'POST',
        body: payload,
        headers: { 'content-type': 'application/json' },
      });
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      await response.arrayBuffer();
    });
    console.log(`in-process / HTTP ratio: ${(inProcess / overHttp).toFixed(1)}x`);
    // The floor: a bare node:http server answering a fixed JSON body, to tell the cost of HTTP itself
    // on this machine apart from the handler's.
    const bare = createServer((req, res) => {
      req.resume();
      req.once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"body":{}}'));
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;
    try {
      const floor = await timed('bare node:http (no handler)', REQUESTS, CONCURRENCY, async () => {
        const response = await fetch(bareUrl, {
          method: 'POST',
          body: payload,
          headers: { 'content-type': 'application/json' },
        });
        await response.arrayBuffer();
      });
      console.log(`handler share of HTTP time: ${Math.max(0, Math.round((1 - overHttp / floor) * 100))}%`);
    } finally {
      await new Promise<void>((resolve) => bare.close(() => resolve()));
    }
  } finally {
    await server.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
