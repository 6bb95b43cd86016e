import { drive as buildDriveClient } from '@googleapis/drive';
import { describe, expect, it } from 'vitest';
import { GoogleDrive, type DriveClient, type GoogleDriveOptions } from '../../src/adapters/google/index.js';
import { CancelledError, UpstreamError } from '../../src/errors/index.js';
import { parseMultipart } from '../fakes/google-drive.js';
import { isUpload, useFakeDrive } from './drive-setup.js';

const api = useFakeDrive();

const store = (options: Partial<GoogleDriveOptions> = {}): GoogleDrive => api.store(options);

const PDF = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x0d, 0x0a, 0x2d, 0x2d, 0x80]);

describe('GoogleDrive.put', () => {
  it('uploads multipart into the folder and returns the webViewLink as url', async () => {
    const stored = await store().put({
      name: 'invoice 1.pdf',
      folder: 'folder-1',
      contentType: 'application/pdf',
      data: PDF,
    });
    expect(stored.url).toBe('https://drive.google.com/file/d/file1/view?usp=drivesdk');
    const upload = api.fake.requests.find(isUpload)!;
    expect(upload.query.uploadType).toEqual(['multipart']);
    expect(upload.query.supportsAllDrives).toEqual(['true']);
    expect(upload.query.fields).toEqual(['id,webViewLink']);
    const [meta, media] = parseMultipart(upload.body, String(upload.headers['content-type']));
    expect(JSON.parse(meta!.body.toString('utf8'))).toEqual({
      name: 'invoice 1.pdf',
      parents: ['folder-1'],
      mimeType: 'application/pdf',
    });
    expect(media!.headers['content-type']).toBe('application/pdf');
    expect(new Uint8Array(media!.body)).toEqual(PDF);
    const file = api.fake.files.get('file1')!;
    expect(file.parents).toEqual(['folder-1']);
    expect(new Uint8Array(file.data)).toEqual(PDF);
  });

  it('uploads a view into a larger buffer byte-exact, and uses folderId when the file names no folder', async () => {
    const big = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
    const view = big.subarray(1000, 200_000);
    await store({ folderId: 'folder-1' }).put({
      name: 'a.bin',
      contentType: 'application/octet-stream',
      data: view,
    });
    const file = api.fake.files.get('file1')!;
    expect(file.parents).toEqual(['folder-1']);
    expect(new Uint8Array(file.data)).toEqual(view);
  });

  it('reads a stored file back by its url', async () => {
    const drive = store();
    const { url } = await drive.put({
      name: 'x.pdf',
      folder: 'folder-1',
      contentType: 'application/pdf',
      data: PDF,
    });
    expect(await drive.get(url)).toEqual({ data: PDF, contentType: 'application/pdf' });
    expect(await drive.get('https://drive.google.com/file/d/missing/view')).toBeUndefined();
    expect(await drive.get('not a drive link!')).toBeUndefined();
  });

  it('retries 429, rate-limit 403 and 5xx with a fresh body each time', async () => {
    api.fake.faults.push(
      { match: isUpload, status: 429, retryAfter: '0' },
      {
        match: isUpload,
        status: 403,
        reason: 'PERMISSION_DENIED',
        reasons: ['userRateLimitExceeded'],
        message: 'User rate limit exceeded.',
      },
    );
    const drive = store();
    await drive.put({ name: 'r.pdf', folder: 'folder-1', contentType: 'application/pdf', data: PDF });
    expect(api.fake.requests.filter(isUpload)).toHaveLength(3);
    expect(new Uint8Array([...api.fake.files.values()][0]!.data)).toEqual(PDF);

    api.fake.requests.length = 0;
    api.fake.faults.push(
      { match: isUpload, status: 500 },
      { match: isUpload, status: 500 },
      { match: isUpload, status: 500 },
    );
    const error = await drive
      .put({ name: 'r.pdf', folder: 'folder-1', contentType: 'application/pdf', data: PDF })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).retryable).toBe(true);
    expect(api.fake.requests.filter(isUpload)).toHaveLength(3);
  });

  it('names a missing or unshared folder and does not retry it', async () => {
    const missing = await store()
      .put({ name: 'a.pdf', folder: 'nope', contentType: 'application/pdf', data: PDF })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UpstreamError);
    expect((missing as UpstreamError).status).toBe(404);
    expect((missing as Error).message).toMatch(
      /folder "nope" was not found, or is not shared with the service account/,
    );
    expect((missing as UpstreamError).retryable).toBe(false);

    api.fake.addFolder('locked');
    api.fake.deny('locked');
    const denied = await store()
      .put({ name: 'a.pdf', folder: 'locked', contentType: 'application/pdf', data: PDF })
      .catch((e: unknown) => e);
    expect((denied as Error).message).toMatch(/Share the folder with the service account/);
    expect(api.fake.requests.filter(isUpload)).toHaveLength(2);
  });

  it('cancels through the signal', async () => {
    api.fake.faults.push({ match: isUpload, status: 200, delayMs: 2000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await store()
      .put(
        { name: 'a.pdf', folder: 'folder-1', contentType: 'application/pdf', data: PDF },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CancelledError);
  });

  it('accepts an already-built drive client', async () => {
    const client: DriveClient = buildDriveClient({
      version: 'v3',
      auth: api.auth as never,
      rootUrl: api.fake.url,
    });
    const stored = await new GoogleDrive({ client, rootUrl: api.fake.url }).put({
      name: 'c.txt',
      folder: 'folder-1',
      contentType: 'text/plain',
      data: new TextEncoder().encode('hi'),
    });
    expect(stored.url).toContain('/file/d/file1/');
  });
});
