import { spawn } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, serveProcess, stepwire, tempDir, type Served } from './helpers.js';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
const temp = tempDir('worker');
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0)) await stop();
  await schemas.drop();
  temp.remove();
});

/** Starts `stepwire worker <args>`; resolves once it says it is executing steps. */
function workerProcess(args: string[]) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'worker', ...args],
    {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('executing steps')) resolve();
    });
    void closed.then((code) => reject(new Error(`worker exited with ${code}\n${stdout}\n${stderr}`)));
  });
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return closed;
  };
  stops.push(stop);
  return { ready, stop, stdout: () => stdout };
}

describe.skipIf(url === undefined)('stepwire worker beside stepwire serve --no-work', () => {
  it('serve only queues, the worker executes the steps, and SIGTERM stops it gracefully', async () => {
    const app = join(temp.dir, 'app');
    cpSync('examples/app', app, { recursive: true });
    // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
    rmSync(join(app, 'access.json'));
    const schema = schemas.next();
    const served: Served = await serveProcess(
      [app, '--port', '0', '--db', url!, '--schema', schema, '--no-work'],
      120_000,
    );
    stops.push(() => served.stop());
    expect(served.stdout()).toContain('--no-work');
    const run = fetch(`${served.url}/workflows/add_customer/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 501, name: 'Queued Quinn', city: 'Lviv' }),
      signal: AbortSignal.timeout(90_000),
    });
    // Nothing executes the run until a worker is there.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).not.toContain('Queued Quinn');

    const worker = workerProcess([app, '--db', url!, '--schema', schema, '--concurrency', '2']);
    await worker.ready;
    const response = await run;
    expect(response.status).toBe(200);
    const record = (await response.json()) as { status: string; steps: { name: string; status: string }[] };
    expect(record.status).toBe('succeeded');
    expect(record.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain('501,Queued Quinn,Lviv');

    expect(await worker.stop()).toBe(0);
    expect(worker.stdout()).toContain('stopping');
  }, 180_000);

  it('stepwire run --db URL --schema NAME keeps its run in that schema; --schema without --db is a usage error', async () => {
    const app = join(temp.dir, 'run-schema');
    cpSync('examples/app', app, { recursive: true });
    // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
    rmSync(join(app, 'access.json'));
    const schema = schemas.next();
    const input = JSON.stringify({ id: 601, name: 'Run Rita', city: 'Kyiv' });
    const ran = await stepwire([
      'run',
      app,
      'add_customer',
      '--input',
      input,
      '--db',
      url!,
      '--schema',
      schema,
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    // A recorded run is a real run: the row it wrote is in the sheet file that serve reads.
    expect(ran.stderr).not.toContain('dry run');
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain('601,Run Rita,Kyiv');
    const db = await openPostgres(url!, { schema });
    try {
      expect((await db.storage.list<{ status: string }>('runs')).map((run) => run.value.status)).toEqual([
        'succeeded',
      ]);
    } finally {
      await db.close();
    }
    // Without --db it is a dry run: it says so and leaves every sheet file as it was.
    const sheet = readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8');
    const dry = await stepwire([
      'run',
      app,
      'add_customer',
      '--input',
      JSON.stringify({ id: 602, name: 'Dry Dora' }),
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain('dry run: entity rows are copies in memory');
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toBe(sheet);
    const alone = await stepwire(['run', app, 'add_customer', '--input', input, '--schema', schema]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--schema names a schema of the database --db gives; give --db too');
  }, 120_000);
});

describe.skipIf(url === undefined)('files a worker stores, served by stepwire serve', () => {
  it('the invoice PDF a worker made opens from the API: kept in the database, linked with the public URL the worker was given, else as a path', async () => {
    const app = join(temp.dir, 'invoices');
    cpSync('examples/invoices', app, { recursive: true });
    const schema = schemas.next();
    const served: Served = await serveProcess(
      [app, '--port', '0', '--db', url!, '--schema', schema, '--no-work'],
      120_000,
    );
    stops.push(() => served.stop());
    expect(served.stdout()).toContain('kept in the database');
    const invoice = async (customer: number) => {
      const response = await fetch(`${served.url}/workflows/invoice/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer_id: customer }),
        signal: AbortSignal.timeout(90_000),
      });
      expect(response.status).toBe(200);
      const record = (await response.json()) as {
        status: string;
        output: { file_url: string };
        error: unknown;
      };
      expect(record.status, JSON.stringify(record.error)).toBe('succeeded');
      return record.output.file_url;
    };

    const linked = workerProcess([
      app,
      '--db',
      url!,
      '--schema',
      schema,
      '--public-url',
      'https://flows.example.test/',
    ]);
    await linked.ready;
    await expect.poll(() => linked.stdout()).toContain('files: kept in the database');
    const full = await invoice(1);
    expect(full).toBe('https://flows.example.test/files/invoice-1.pdf');
    expect(await linked.stop()).toBe(0);

    const plain = workerProcess([app, '--db', url!, '--schema', schema]);
    await plain.ready;
    await expect.poll(() => plain.stdout()).toContain('give --public-url');
    const path = await invoice(2);
    expect(path).toBe('/files/invoice-2.pdf');

    for (const at of [new URL(full).pathname, path]) {
      const got = await fetch(`${served.url}${at}`, { signal: AbortSignal.timeout(30_000) });
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('application/pdf');
      expect(got.headers.get('x-content-type-options')).toBe('nosniff');
      expect(got.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      const bytes = new Uint8Array(await got.arrayBuffer());
      expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe('%PDF-');
      expect(got.headers.get('content-length')).toBe(String(bytes.byteLength));
      const etag = got.headers.get('etag')!;
      expect(etag).toMatch(/^".+"$/);

      const head = await fetch(`${served.url}${at}`, { method: 'HEAD', signal: AbortSignal.timeout(30_000) });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(bytes.byteLength));
      expect((await head.arrayBuffer()).byteLength).toBe(0);
      const cached = await fetch(`${served.url}${at}`, {
        headers: { 'if-none-match': etag },
        signal: AbortSignal.timeout(30_000),
      });
      expect(cached.status).toBe(304);
    }
    const missing = await fetch(`${served.url}/files/invoice-9.pdf`, { signal: AbortSignal.timeout(30_000) });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ status: 404, code: 'not_found' });

    // The files are rows of the database, one per file.
    const db = await openPostgres(url!, { schema });
    try {
      expect((await db.files.open('invoice-1.pdf'))?.contentType).toBe('application/pdf');
      expect(await db.files.open('invoice-2.pdf')).toBeDefined();
    } finally {
      await db.close();
    }
  }, 240_000);
});
