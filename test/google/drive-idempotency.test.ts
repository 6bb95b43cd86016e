import { describe, expect, it } from 'vitest';
import { GoogleDrive } from '../../src/adapters/google/index.js';
import { Engine } from '../../src/index.js';
import { parseAppPropertyQuery } from '../fakes/google-drive.js';
import { isSearch, isUpload, useFakeDrive } from './drive-setup.js';

const api = useFakeDrive();

const drive = (): GoogleDrive => api.store();

const file = {
  name: 'invoice.pdf',
  folder: 'folder-1',
  contentType: 'application/pdf',
  data: new Uint8Array([1, 2, 3]),
};

describe('GoogleDrive.put with an idempotency key', () => {
  it('creates one file for two puts with the same key, in two adapters, and returns the same url', async () => {
    const first = await drive().put(file, { idempotencyKey: 'run-1:upload' });
    // A second adapter, as in another process after a redelivery: it knows nothing in memory.
    const second = await drive().put(file, { idempotencyKey: 'run-1:upload' });
    expect(second.url).toBe(first.url);
    expect([...api.fake.files.values()]).toHaveLength(1);
    expect(api.fake.requests.filter(isUpload)).toHaveLength(1);
    expect([...api.fake.files.values()][0]!.appProperties).toEqual({ stepwire_key: 'run-1:upload' });
  });

  it('searches with the documented appProperties query before uploading', async () => {
    await drive().put(file, { idempotencyKey: 'run-2:upload' });
    const search = api.fake.requests.find(isSearch)!;
    expect(search.query.q).toEqual([`appProperties has { key='stepwire_key' and value='run-2:upload' }`]);
    expect(search.query.corpora).toEqual(['allDrives']);
    expect(search.query.includeItemsFromAllDrives).toEqual(['true']);
    expect(search.query.supportsAllDrives).toEqual(['true']);
  });

  it('creates a new file for another key, and for every put without a key', async () => {
    const store = drive();
    const a = await store.put(file, { idempotencyKey: 'run-3:a' });
    const b = await store.put(file, { idempotencyKey: 'run-3:b' });
    await store.put(file);
    await store.put(file);
    expect(a.url).not.toBe(b.url);
    expect(api.fake.files.size).toBe(4);
    expect(api.fake.requests.filter(isSearch)).toHaveLength(2);
  });

  it('escapes quotes and backslashes in the key, which a step name may hold', async () => {
    const key = String.raw`run-4:it's a \ step`;
    const first = await drive().put(file, { idempotencyKey: key });
    const second = await drive().put(file, { idempotencyKey: key });
    expect(second.url).toBe(first.url);
    expect(api.fake.files.size).toBe(1);
    const q = api.fake.requests.find(isSearch)!.query.q![0]!;
    expect(q).toBe(String.raw`appProperties has { key='stepwire_key' and value='run-4:it\'s a \\ step' }`);
    expect(parseAppPropertyQuery(q).value).toBe(key);
  });

  it('keeps a key longer than a Drive property allows as its SHA-256', async () => {
    const key = `run-5:${'step '.repeat(40)}`;
    const first = await drive().put(file, { idempotencyKey: key });
    const second = await drive().put(file, { idempotencyKey: key });
    expect(second.url).toBe(first.url);
    const stored = [...api.fake.files.values()][0]!.appProperties['stepwire_key']!;
    expect(stored).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(api.fake.files.size).toBe(1);
  });

  it('finds the file of an upload whose answer was lost, instead of uploading it again', async () => {
    api.fake.faults.push({ match: isUpload, status: 503, apply: true });
    const stored = await drive().put(file, { idempotencyKey: 'run-6:upload' });
    expect(api.fake.requests.filter(isUpload)).toHaveLength(1);
    expect(api.fake.requests.filter(isSearch)).toHaveLength(2);
    expect(api.fake.files.size).toBe(1);
    expect(stored.url).toBe(`https://drive.google.com/file/d/file1/view?usp=drivesdk`);
  });

  it('uploads once for an upload_file step, whose key is <run id>:<step name>', async () => {
    const engine = new Engine({ files: { drive: drive() } });
    await engine.workflows.create({
      name: 'upload',
      steps: [
        {
          name: 'put',
          type: 'l2',
          l2_data: {
            provider: 'drive',
            module: 'files',
            action: 'upload_file',
            input_data: { file_data: btoa('hello'), file_name: 'hello.txt', folder_id: 'folder-1' },
          },
        },
      ],
      wires: [],
      workflow_output: { name: 'output', output_data: { url: '{{put.file_url}}' } },
    });
    const run = await engine.run('upload');
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect([...api.fake.files.values()][0]!.appProperties).toEqual({ stepwire_key: `${run.id}:put` });
  });
});
