/**
 * Requests per second of `POST /catalog/entities/{name}/read` through the Node server (`serve`),
 * compared with the same read called in-process (`engine.catalog.getEntity`), in the same run.
 * Load is bounded: a fixed number of requests from a few concurrent keep-alive clients on 127.0.0.1.
 * Then serve against bare `node:http` (a fixed answer, and the same read written by hand), the
 * same client for each, sampled in turns (issue 45 item 5: serve at 80% or more of bare node:http
 * serving the same read; the fixed answer is the floor of HTTP itself, shown beside it).
 *
 * Then the cost of sign-in (DESIGN 18, issue 38 item 8): the handler of an engine with an access
 * policy, each request carrying a bearer API key, against the handler of an engine without one
 * given the same request (its key ignored), on the same read routes (`GET /workflows/{name}` and
 * the entity read above), called in-process (no socket, so the figure is the handler's own: the
 * caller's building of a `Request` with one more header is the same on both sides), in turns, best of
 * several samples; goal at most 1.10x. The parts sign-in adds (the key's check, the policy read,
 * `engine.as`) are timed alone, and the handler step by step (no header, the header ignored, ...).
 * Run directly with `npx tsx bench/http.ts`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { serve } from '../src/node/serve.js';
import { createHandler } from '../src/http/index.js';
import { Engine, MemorySpreadsheets, type AccessPolicy, type Entity, type Workflow } from '../src/index.js';
import { checkEqual, printTable, sized } from './util.js';

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
  const perSecond = await throughput(count, concurrency, once);
  console.log(
    `${label.padEnd(34)} ${count} calls in ${(count / perSecond).toFixed(2)} s = ${Math.round(perSecond).toLocaleString('en-US')} /s`,
  );
  return perSecond;
}

/** Calls per second of `once`, `count` calls from `concurrency` callers at once. */
async function throughput(count: number, concurrency: number, once: () => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) await once();
    }),
  );
  return count / ((performance.now() - start) / 1000);
}

/** Samples taken of each server, in turns, for the serve / bare node:http figure. */
const SERVER_SAMPLES = sized(7, 1);

/**
 * Each server's best throughput over the samples, taken in turns (a, b, c, a, b, c, ...) so that
 * load from elsewhere on the machine falls on each alike; each sample is REQUESTS / SERVER_SAMPLES
 * requests.
 */
async function serversInTurns(servers: Record<string, () => Promise<void>>): Promise<Record<string, number>> {
  const best: Record<string, number> = {};
  for (const [name, once] of Object.entries(servers)) {
    for (let i = 0; i < sized(300, 5); i++) await once(); // warm up
    best[name] = 0;
  }
  const count = Math.max(1, Math.round(REQUESTS / SERVER_SAMPLES));
  for (let sample = 0; sample < SERVER_SAMPLES; sample++)
    for (const [name, once] of Object.entries(servers))
      best[name] = Math.max(best[name]!, await throughput(count, CONCURRENCY, once));
  return best;
}

/** A `node:http` server on 127.0.0.1 answering with `answer`; its URL and how to close it. */
async function bareServer(
  answer: (body: Buffer) => Promise<string> | string,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      void Promise.resolve(answer(Buffer.concat(chunks))).then((text) =>
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
          .end(text),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
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
  // The floor: a bare node:http server answering a fixed JSON body, to tell the cost of HTTP itself
  // on this machine apart from the handler's; and the same read written by hand on node:http (the
  // body parsed, the engine called, its answer serialized), with no routing, limits or checks.
  const bare = await bareServer(() => '{"body":{}}');
  // The read's answer as a fixed text: what HTTP costs to carry the same bytes, without the read.
  const answerText = JSON.stringify(await engine.catalog.getEntity({ entity_name: 'orders', ...body }));
  const sameBytes = await bareServer(() => answerText);
  const byHand = await bareServer(async (bytes) => {
    const read = JSON.parse(bytes.toString('utf8')) as typeof body;
    return JSON.stringify(await engine.catalog.getEntity({ entity_name: 'orders', ...read }));
  });
  const post = async (target: string) => {
    const response = await fetch(target, {
      method: 'POST',
      body: payload,
      headers: { 'content-type': 'application/json' },
    });
    if (response.status !== 200) throw new Error(`status ${response.status}`);
    await response.arrayBuffer();
  };
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
    for (const [what, target] of [
      ['serve', url],
      ['the read by hand', `${byHand.url}/`],
    ] as const) {
      const answer = await fetch(target, {
        method: 'POST',
        body: payload,
        headers: { 'content-type': 'application/json' },
      });
      checkEqual(answer.status, 200, `the HTTP read through ${what} answers 200`);
      checkEqual(
        await answer.json(),
        JSON.parse(JSON.stringify(direct)),
        `the HTTP read through ${what} answers as the in-process one`,
      );
    }
    const inProcess = await timed('in-process engine.catalog.getEntity', REQUESTS, CONCURRENCY, async () => {
      const out = await engine.catalog.getEntity({ entity_name: 'orders', ...body });
      if (out.body.error?.is_error) throw new Error(out.body.error.errors?.join('; '));
    });
    const overHttp = await timed('HTTP POST /catalog/entities/…/read', REQUESTS, CONCURRENCY, () =>
      post(url),
    );
    console.log(`in-process / HTTP ratio: ${(inProcess / overHttp).toFixed(1)}x`);
    const best = await serversInTurns({
      serve: () => post(url),
      'read by hand': () => post(`${byHand.url}/`),
      bare: () => post(`${bare.url}/`),
      'same bytes': () => post(`${sameBytes.url}/`),
    });
    // The goal compares the layers: bare node:http answering the same request (the body read and
    // parsed, the engine's read, its answer written) against serve. A fixed answer is the floor of
    // HTTP itself on this machine, and is shown too: the read's own cost is part of that ratio.
    const goal = best['serve']! / best['read by hand']!;
    const overFixed = best['serve']! / best['bare']!;
    printTable(
      `serve against bare node:http, the same client (fetch, ${CONCURRENCY} at once), best of ${SERVER_SAMPLES} samples taken in turns (goal serve / the same read on bare node:http >= 0.80)`,
      ['server', 'requests/s', 'over bare', 'over the read by hand'],
      [
        [
          'bare node:http, a fixed answer (no handler)',
          best['bare']!,
          1,
          best['bare']! / best['read by hand']!,
        ],
        [
          "bare node:http, the read's answer as a fixed text",
          best['same bytes']!,
          best['same bytes']! / best['bare']!,
          best['same bytes']! / best['read by hand']!,
        ],
        [
          'the same read by hand on node:http',
          best['read by hand']!,
          best['read by hand']! / best['bare']!,
          1,
        ],
        ['serve(createHandler(engine))', best['serve']!, overFixed, goal],
      ].map(([name, perSecond, overBare, overHand]) => [
        name as string,
        Math.round(perSecond as number).toLocaleString('en-US'),
        (overBare as number).toFixed(2),
        (overHand as number).toFixed(2),
      ]),
    );
    console.log(
      `serve / bare node:http answering a fixed body (no read): ${overFixed.toFixed(2)}; the read by hand / that: ${(best['read by hand']! / best['bare']!).toFixed(2)}`,
    );
    console.log(
      `serve / the same read on bare node:http: ${goal.toFixed(2)} (goal >= 0.80: ${goal >= 0.8 ? 'met' : 'not met'})`,
    );
  } finally {
    await server.close();
    await bare.close();
    await sameBytes.close();
    await byHand.close();
  }
  await signInCost(cells);
}

/** What the signed-in key may do: read definitions and the orders, nothing else. */
const POLICY: AccessPolicy = {
  roles: { reader: { grants: ['definitions.read', 'entity.read:orders'] }, admin: { grants: ['*'] } },
};

const WORKFLOW: Workflow = {
  name: 'ship',
  steps: [
    {
      name: 'pick',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { id: '{{input.id}}' },
      },
    },
  ],
  wires: [],
};

const SIGN_IN_CALLS = sized(4_000, 20);
const SIGN_IN_SAMPLES = sized(15, 1);

/** An engine with the orders and the workflow, with `access` or without. */
async function engineOf(cells: (string | number)[][], access?: AccessPolicy): Promise<Engine> {
  const engine = new Engine({
    spreadsheets: new MemorySpreadsheets({ shop: { orders: cells.map((row) => [...row]) } }),
    ...(access ? { access } : {}),
  });
  await engine.catalog.registerEntity(entity);
  await engine.workflows.create(WORKFLOW);
  return engine;
}

/** Milliseconds per call of `once`, the best of the samples `sample` takes (each of `calls` calls). */
async function perCall(calls: number, once: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < calls; i++) await once();
  return (performance.now() - start) / calls;
}

/**
 * Each variant's best time per call over the samples, taken in turns (a, b, c, a, b, c, ...) so
 * that a drift of the machine falls on every variant alike.
 */
async function inTurns(calls: number, variants: Record<string, () => Promise<unknown>>) {
  const best: Record<string, number> = {};
  for (const [name, once] of Object.entries(variants)) {
    for (let i = 0; i < sized(300, 3); i++) await once(); // warm up
    best[name] = Infinity;
  }
  for (let sample = 0; sample < SIGN_IN_SAMPLES; sample++)
    for (const [name, once] of Object.entries(variants))
      best[name] = Math.min(best[name]!, await perCall(calls, once));
  return best;
}

const us = (ms: number) => `${(ms * 1000).toFixed(1)} us`;

/** The handler with sign-in on (a bearer key, an engine with a policy) against the handler without it. */
async function signInCost(cells: (string | number)[][]): Promise<void> {
  const open = await engineOf(cells);
  const guarded = await engineOf(cells, POLICY);
  const { secret } = await guarded.keys.create({ name: 'bench', roles: ['reader'] });
  const plain = createHandler(open);
  const signed = createHandler(guarded);
  const origin = 'http://127.0.0.1:8787';
  const bearer = { authorization: `Bearer ${secret}` };
  const payload = JSON.stringify(body);
  const routes = {
    'GET /workflows/{name}': (headers: Record<string, string>) =>
      new Request(`${origin}/workflows/ship`, { headers }),
    'POST /catalog/entities/{name}/read': (headers: Record<string, string>) =>
      new Request(`${origin}/catalog/entities/orders/read`, {
        method: 'POST',
        body: payload,
        headers: { ...headers, 'content-type': 'application/json' },
      }),
  };
  const answered = async (handler: typeof plain, request: Request) => {
    const response = await handler(request);
    if (response.status !== 200) throw new Error(`status ${response.status}: ${await response.text()}`);
    return response.text();
  };
  for (const [route, make] of Object.entries(routes)) {
    checkEqual((await signed(make({}))).status, 401, `${route} without a key, sign-in on: 401`);
    checkEqual(
      await answered(signed, make(bearer)),
      await answered(plain, make({})),
      `${route} with the key answers as the open handler`,
    );
  }

  const rows: string[][] = [];
  for (const [route, make] of Object.entries(routes)) {
    const best = await inTurns(SIGN_IN_CALLS, {
      off: () => answered(plain, make(bearer)),
      on: () => answered(signed, make(bearer)),
    });
    rows.push([route, us(best['off']!), us(best['on']!), `${(best['on']! / best['off']!).toFixed(2)}x`]);
  }
  printTable(
    `sign-in: the handler in-process, ${SIGN_IN_CALLS} calls a sample, best of ${SIGN_IN_SAMPLES} (goal on/off <= 1.10x)`,
    ['route', 'sign-in off (the key ignored)', 'sign-in on (bearer key)', 'on / off'],
    rows,
  );

  // Where the added time goes: each part sign-in adds, alone, on the same engine.
  const stores = guarded.credentialStores();
  const principal = (await stores.verifyKey(secret))!;
  const bytes = new TextEncoder().encode(secret);
  const view = guarded.as(principal);
  const parts = await inTurns(SIGN_IN_CALLS, {
    'verifyKey (one storage get + SHA-256)': async () => stores.verifyKey(secret),
    'SHA-256 of the key alone (crypto.subtle)': () => crypto.subtle.digest('SHA-256', bytes),
    'accessControlled() (policy read)': async () => guarded.accessControlled(),
    'engine.as(principal) (a view per request)': async () => guarded.as(principal),
    'as(p).workflows.get (view + grants + get)': () => guarded.as(principal).workflows.get('ship'),
    'view.workflows.get (one view: grants + get)': () => view.workflows.get('ship'),
    'plain engine.workflows.get': () => open.workflows.get('ship'),
  });
  // The same split through the handler: the header alone, then a principal given by the host's
  // hook (engine.as and the policy, no key to check), then the bearer key.
  const hooked = createHandler(guarded, { auth: { principal: () => principal } });
  const make = routes['GET /workflows/{name}'];
  const steps = await inTurns(SIGN_IN_CALLS, {
    'off, no header': () => answered(plain, make({})),
    'off, Authorization header (ignored)': () => answered(plain, make(bearer)),
    'on, principal from auth.principal (no key)': () => answered(hooked, make({})),
    'on, bearer key': () => answered(signed, make(bearer)),
  });
  printTable(
    'GET /workflows/{name} step by step, per call (best of the samples)',
    ['handler', 'time', 'over off'],
    Object.entries(steps).map(([name, ms]) => [name, us(ms), us(ms - steps['off, no header']!)]),
  );
  printTable(
    'sign-in parts, per call (best of the samples)',
    ['part', 'time'],
    Object.entries(parts).map(([part, ms]) => [part, us(ms)]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run();
