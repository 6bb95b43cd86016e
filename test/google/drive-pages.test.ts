import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GoogleDrive } from '../../src/adapters/google/index.js';
import { startFakeDrive, type FakeDrive } from '../fakes/google-drive.js';
import type { RecordedRequest } from '../fakes/google-sheets.js';

let fake: FakeDrive;
let auth: OAuth2Client;

beforeAll(async () => {
  fake = await startFakeDrive();
  auth = new OAuth2Client();
  auth.setCredentials({ access_token: fake.token });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.addFolder('folder-1');
});

function drive(): GoogleDrive {
  return new GoogleDrive({ auth, rootUrl: fake.url, retry: { attempts: 3, baseMs: 1, capMs: 10 } });
}

const isUpload = (r: RecordedRequest): boolean => r.method === 'POST' && r.path === '/upload/drive/v3/files';
const isSearch = (r: RecordedRequest): boolean => r.method === 'GET' && r.path === '/drive/v3/files';
const file = {
  name: 'invoice.pdf',
  folder: 'folder-1',
  contentType: 'application/pdf',
  data: new Uint8Array([1, 2, 3]),
};
/** An empty page that says more follow; `offset:0` is the fake's token for "nothing listed yet". */
const emptyPage = (token = 'offset:0'): { match: (r: RecordedRequest) => boolean; body: string } => ({
  match: isSearch,
  body: JSON.stringify({ nextPageToken: token, incompleteSearch: false, files: [] }),
});

describe('GoogleDrive key search over several pages', () => {
  it('follows nextPageToken past an empty first page and finds the file of a redelivered upload', async () => {
    const first = await drive().put(file, { idempotencyKey: 'run-1:upload' });
    fake.requests.length = 0;
    fake.faults.push(emptyPage());
    const second = await drive().put(file, { idempotencyKey: 'run-1:upload' });
    expect(second.url).toBe(first.url);
    expect(fake.files.size).toBe(1);
    const searches = fake.requests.filter(isSearch);
    expect(searches.map((r) => r.query.pageToken ?? null)).toEqual([null, ['offset:0']]);
    expect(searches[0]!.query.fields).toEqual(['nextPageToken,incompleteSearch,files(id,webViewLink)']);
    expect(fake.requests.filter(isUpload)).toHaveLength(0);
  });

  it('stops after a bounded number of pages and uploads', async () => {
    for (let i = 0; i < 20; i++) fake.faults.push(emptyPage());
    await drive().put(file, { idempotencyKey: 'run-2:upload' });
    expect(fake.requests.filter(isSearch)).toHaveLength(10);
    expect(fake.files.size).toBe(1);
  });

  it('uploads once when the last page says the search was incomplete and found nothing', async () => {
    fake.faults.push({ match: isSearch, body: JSON.stringify({ incompleteSearch: true, files: [] }) });
    await drive().put(file, { idempotencyKey: 'run-3:upload' });
    expect(fake.requests.filter(isSearch)).toHaveLength(1);
    expect(fake.requests.filter(isUpload)).toHaveLength(1);
  });
});
