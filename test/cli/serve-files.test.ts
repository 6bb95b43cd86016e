import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inProcess, serveProcess, stepwire, tempDir, type Served } from './helpers.js';

const temp = tempDir('serve-files');
let served: Served | undefined;
afterAll(async () => {
  await served?.stop();
  temp.remove();
});

const call = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });

describe('stepwire serve: the files upload_file stored', () => {
  it('serves a stored file to GET, its headers without a body to HEAD, and a missing one as a 404 problem', async () => {
    const app = join(temp.dir, 'invoices');
    cpSync('examples/invoices', app, { recursive: true });
    served = await serveProcess([app, '--port', '0', '--memory'], 120_000);
    const ran = await call(`${served.url}/workflows/invoice/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customer_id: 1 }),
    });
    const record = (await ran.json()) as { status: string; output: { file_url: string } };
    expect(record.status).toBe('succeeded');
    const fileUrl = record.output.file_url;
    expect(fileUrl.startsWith(`${served.url}/files/`)).toBe(true);

    const got = await call(fileUrl);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    const bytes = new Uint8Array(await got.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe('%PDF-');

    const head = await call(fileUrl, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/pdf');
    expect(head.headers.get('content-length')).toBe(String(bytes.byteLength));
    expect((await head.arrayBuffer()).byteLength).toBe(0);

    const missing = await call(`${served.url}/files/nothing-here.pdf`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    expect(await missing.json()).toMatchObject({ status: 404, code: 'not_found' });
  }, 120_000);

  it('links never carry a listen address: 0.0.0.0 is linked as 127.0.0.1, and --public-url starts every link', async () => {
    await served?.stop();
    const app = join(temp.dir, 'invoices-public');
    cpSync('examples/invoices', app, { recursive: true });
    // Beyond loopback only with sign-in: a policy and an admin key in the project's database.
    const key = (await inProcess(['init-access', app, '--key'])).stdout.trim();
    const auth = { authorization: `Bearer ${key}` };
    // Listening on every address; requests still go to loopback only.
    served = await serveProcess([app, '--port', '0', '--host', '0.0.0.0'], 120_000);
    expect(served.stdout()).not.toContain('0.0.0.0');
    const first = (await (
      await call(`${served.url}/workflows/invoice/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ customer_id: 1 }),
      })
    ).json()) as { output: { file_url: string } };
    expect(first.output.file_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
    await served.stop();

    const publicUrl = 'https://flows.example.test/';
    served = await serveProcess(
      [app, '--port', '0', '--host', '0.0.0.0', '--public-url', publicUrl],
      120_000,
    );
    expect(served.stdout()).toContain('public URL: https://flows.example.test');
    expect(served.stdout()).toContain('API: https://flows.example.test/openapi.json');
    expect(served.stdout()).toContain(
      'console: https://flows.example.test/console  approvals: https://flows.example.test/approvals  MCP: https://flows.example.test/mcp',
    );
    const record = (await (
      await call(`${served.url}/workflows/invoice/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ customer_id: 1 }),
      })
    ).json()) as { output: { file_url: string } };
    const fileUrl = record.output.file_url;
    expect(fileUrl.startsWith('https://flows.example.test/files/')).toBe(true);
    // A proxy at the public URL forwards the path: the same path on this server serves the file.
    const got = await call(`${served.url}${new URL(fileUrl).pathname}`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
  }, 180_000);

  it('--files DIR: run keeps the PDF in that folder, and serve --files serves it from there', async () => {
    await served?.stop();
    const app = join(temp.dir, 'invoices-folder');
    cpSync('examples/invoices', app, { recursive: true });
    const shared = join(temp.dir, 'shared-files');
    const ran = await stepwire(
      [
        'run',
        app,
        'invoice',
        '--input',
        '{"customer_id":3}',
        '--files',
        shared,
        '--public-url',
        'https://flows.example.test',
        '--out',
        join(temp.dir, 'out'),
      ],
      { timeoutMs: 120_000 },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect((JSON.parse(ran.stdout) as { file_url: string }).file_url).toBe(
      'https://flows.example.test/files/invoice-3.pdf',
    );
    expect(readFileSync(join(shared, 'invoice-3.pdf')).subarray(0, 5).toString()).toBe('%PDF-');

    served = await serveProcess([app, '--port', '0', '--memory', '--files', shared], 120_000);
    expect(served.stdout()).toContain(`kept in the folder ${shared}`);
    const got = await call(`${served.url}/files/invoice-3.pdf`);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(new TextDecoder().decode(new Uint8Array(await got.arrayBuffer()).subarray(0, 5))).toBe('%PDF-');
    const record = (await (
      await call(`${served.url}/workflows/invoice/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer_id: 1 }),
      })
    ).json()) as { output: { file_url: string } };
    expect(record.output.file_url).toBe(`${served.url}/files/invoice-1.pdf`);
    expect(existsSync(join(shared, 'invoice-1.pdf'))).toBe(true);
    // The folder's record of idempotency keys is not served.
    expect((await call(`${served.url}/files/.stepwire-keys/x.json`)).status).toBe(404);
    expect((await call(`${served.url}/files/..%2Fsecret`)).status).toBe(404);
  }, 240_000);
});
