import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveProcess, tempDir, type Served } from './helpers.js';

const temp = tempDir('serve-durable');
let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
  temp.remove();
});

const get = (url: string) => fetch(url, { signal: AbortSignal.timeout(20_000) });

describe('stepwire serve keeps its data', () => {
  it('a form submitted, the process killed with SIGKILL and started again: the run is listed and the row is in the sheet file', async () => {
    const app = join(temp.dir, 'app');
    cpSync('examples/app', app, { recursive: true });
    // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
    rmSync(join(app, 'access.json'));
    served = await serveProcess([app, '--port', '0'], 120_000);
    expect(served.stdout()).toContain(`data: ${join(app, '.stepwire', 'db')}`);

    const submit = await fetch(`${served.url}/applications/invoices/screens/start/forms/add`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: served.url },
      body: 'id=77&name=Durable+D%C3%BCrer&city=Kyiv',
      redirect: 'manual',
      signal: AbortSignal.timeout(20_000),
    });
    expect(submit.status).toBe(303);
    expect(submit.headers.get('location')).toContain('/screens/start?added=77');
    const before = (await (await get(`${served.url}/runs?workflow=add_customer`)).json()) as {
      runs: { id: string; status: string }[];
    };
    expect(before.runs).toHaveLength(1);
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain('77,Durable Dürer,Kyiv');

    await served.kill();
    served = await serveProcess([app, '--port', '0'], 120_000);
    const after = (await (await get(`${served.url}/runs?workflow=add_customer`)).json()) as {
      runs: { id: string; status: string }[];
    };
    expect(after.runs).toEqual([expect.objectContaining({ id: before.runs[0]!.id, status: 'succeeded' })]);
    const start = await (await get(`${served.url}/applications/invoices/screens/start`)).text();
    expect(start).toContain('Durable Dürer');
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain('77,Durable Dürer,Kyiv');
  }, 120_000);
});
