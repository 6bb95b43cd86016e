import { describe, expect, it } from 'vitest';
import { GoogleDrive } from '../../src/adapters/google/index.js';
import type { RecordedRequest } from '../fakes/google-sheets.js';
import { isSearch, isUpload, useFakeDrive } from './drive-setup.js';

const api = useFakeDrive();

const drive = (): GoogleDrive => api.store();

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
    api.fake.requests.length = 0;
    api.fake.faults.push(emptyPage());
    const second = await drive().put(file, { idempotencyKey: 'run-1:upload' });
    expect(second.url).toBe(first.url);
    expect(api.fake.files.size).toBe(1);
    const searches = api.fake.requests.filter(isSearch);
    expect(searches.map((r) => r.query.pageToken ?? null)).toEqual([null, ['offset:0']]);
    expect(searches[0]!.query.fields).toEqual(['nextPageToken,incompleteSearch,files(id,webViewLink)']);
    expect(api.fake.requests.filter(isUpload)).toHaveLength(0);
  });

  it('stops after a bounded number of pages and uploads', async () => {
    for (let i = 0; i < 20; i++) api.fake.faults.push(emptyPage());
    await drive().put(file, { idempotencyKey: 'run-2:upload' });
    expect(api.fake.requests.filter(isSearch)).toHaveLength(10);
    expect(api.fake.files.size).toBe(1);
  });

  it('uploads once when the last page says the search was incomplete and found nothing', async () => {
    api.fake.faults.push({ match: isSearch, body: JSON.stringify({ incompleteSearch: true, files: [] }) });
    await drive().put(file, { idempotencyKey: 'run-3:upload' });
    expect(api.fake.requests.filter(isSearch)).toHaveLength(1);
    expect(api.fake.requests.filter(isUpload)).toHaveLength(1);
  });
});
