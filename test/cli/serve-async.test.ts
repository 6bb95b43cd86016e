import { cpSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveProcess, tempDir, type Served } from './helpers.js';

const temp = tempDir('serve-async');
let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
  temp.remove();
});

const call = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(30_000) });

/** examples/app with a workflow `slow`: add_customer whose script is busy for 1.5 s before it appends. */
function slowApp(): string {
  const app = join(temp.dir, 'app');
  cpSync('examples/app', app, { recursive: true });
  // Served open on loopback: this test is not about sign-in (test/http/sign-in.test.ts is).
  rmSync(join(app, 'access.json'));
  writeFileSync(
    join(app, 'scripts/slow.js'),
    `/* global getEntity, writeEntity */
const end = Date.now() + 1500;
while (Date.now() < end) {
  // busy, so that a client gives up while the run goes on
}
writeEntity('customers', getEntity('row'));
`,
  );
  const workflow = JSON.parse(readFileSync(join(app, 'workflows/add_customer.json'), 'utf8')) as {
    name: string;
    steps: { atlas_data?: { input_data: { code_file: string } } }[];
  };
  workflow.name = 'slow';
  workflow.steps[1]!.atlas_data!.input_data.code_file = 'slow.js';
  writeFileSync(join(app, 'workflows/slow.json'), JSON.stringify(workflow));
  return app;
}

describe('stepwire serve: a client that goes away never cancels its run', () => {
  it('a client aborting its POST /workflows/{name}/runs mid-run: the run goes on and succeeds; Prefer: respond-async answers 202 at once', async () => {
    const app = slowApp();
    // The default: durable runs in the project's embedded database, executed in this process.
    served = await serveProcess([app, '--port', '0'], 120_000);
    const leave = new AbortController();
    const gone = call(`${served.url}/workflows/slow/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 701, name: 'Left Lena' }),
      signal: leave.signal,
    });
    setTimeout(() => leave.abort(), 400);
    await expect(gone).rejects.toThrow();
    const runs = async () =>
      ((await (await call(`${served!.url}/runs?workflow=slow`)).json()) as { runs: { status: string }[] })
        .runs;
    await expect
      .poll(async () => (await runs()).map((run) => run.status), { timeout: 60_000 })
      .toEqual(['succeeded']);
    expect(readFileSync(join(app, 'sheets/shop/customers.csv'), 'utf8')).toContain('701,Left Lena');
    // The server logged the answer that stopped waiting.
    expect(served.stderr()).toMatch(/POST \/workflows\/slow\/runs 202/);

    const started = await call(`${served.url}/workflows/slow/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ id: 702, name: 'Async Ann' }),
    });
    expect(started.status).toBe(202);
    expect(started.headers.get('preference-applied')).toBe('respond-async');
    const { run_id } = (await started.json()) as { run_id: string };
    expect(started.headers.get('location')).toBe(`/runs/${run_id}`);
    const status = async () =>
      ((await (await call(`${served!.url}/runs/${run_id}`)).json()) as { status: string }).status;
    expect(['queued', 'running']).toContain(await status());
    await expect.poll(status, { timeout: 60_000 }).toBe('succeeded');
  }, 180_000);
});
