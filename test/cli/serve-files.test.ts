import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveProcess, tempDir, type Served } from './helpers.js';

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
    // Listening on every address; requests still go to loopback only.
    served = await serveProcess([app, '--port', '0', '--memory', '--host', '0.0.0.0'], 120_000);
    expect(served.stdout()).not.toContain('0.0.0.0');
    const first = (await (
      await call(`${served.url}/workflows/invoice/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customer_id: 1 }),
      })
    ).json()) as { output: { file_url: string } };
    expect(first.output.file_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\//);
    await served.stop();

    const publicUrl = 'https://flows.example.test/';
    served = await serveProcess(
      [app, '--port', '0', '--memory', '--host', '0.0.0.0', '--public-url', publicUrl],
      120_000,
    );
    expect(served.stdout()).toContain('public URL: https://flows.example.test');
    expect(served.stdout()).toContain('API: https://flows.example.test/openapi.json');
    const record = (await (
      await call(`${served.url}/workflows/invoice/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
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
});
