import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalFileStore } from '../../src/adapters/node/index.js';
import { Engine, MemoryFileStore, ValidationError } from '../../src/index.js';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const report = { name: 'report.txt', folder: 'out', contentType: 'text/plain', data: text('first') };

describe('MemoryFileStore with an idempotency key', () => {
  it('stores once for two puts with the same key and returns the first url', () => {
    const store = new MemoryFileStore();
    const first = store.put(report, { idempotencyKey: 'run-1:upload' });
    const second = store.put(
      { ...report, name: 'other.txt', data: text('second') },
      { idempotencyKey: 'run-1:upload' },
    );
    expect(second).toEqual(first);
    expect(store.files.map((f) => f.name)).toEqual(['report.txt']);
    expect(new TextDecoder().decode(store.read(first.url))).toBe('first');
  });

  it('stores every put with another key or without one', () => {
    const store = new MemoryFileStore();
    store.put(report, { idempotencyKey: 'a' });
    store.put({ ...report, name: 'b.txt' }, { idempotencyKey: 'b' });
    store.put({ ...report, name: 'c.txt' });
    expect(store.files).toHaveLength(3);
  });
});

describe('LocalFileStore with an idempotency key', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stepwire-keys-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('returns the first url for a key used before, even from a new store on the same folder', async () => {
    const first = await new LocalFileStore({ dir }).put(report, { idempotencyKey: 'run-2:upload' });
    // A new instance, as after a restart: only the folder remembers the key.
    const again = await new LocalFileStore({ dir }).put(
      { ...report, name: 'renamed.txt', data: text('second') },
      { idempotencyKey: 'run-2:upload' },
    );
    expect(again).toEqual(first);
    expect(await readdir(join(dir, 'out'))).toEqual(['report.txt']);
    expect(await readFile(join(dir, 'out', 'report.txt'), 'utf8')).toBe('first');
  });

  it('keeps one small record per key in .stepwire-keys, and none without a key', async () => {
    const store = new LocalFileStore({ dir, publicBaseUrl: 'https://files.example.com/' });
    await store.put(report);
    expect((await readdir(dir)).sort()).toEqual(['out']);
    const { url } = await store.put({ ...report, name: 'keyed.txt' }, { idempotencyKey: 'run-3:upload' });
    const records = await readdir(join(dir, '.stepwire-keys'));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatch(/^[0-9a-f]{64}\.json$/);
    const record = JSON.parse(await readFile(join(dir, '.stepwire-keys', records[0]!), 'utf8')) as object;
    expect(record).toMatchObject({ key: 'run-3:upload', url });
  });

  it('writes once when two puts with the same key overlap', async () => {
    const store = new LocalFileStore({ dir });
    const [a, b] = await Promise.all([
      store.put(report, { idempotencyKey: 'run-4:upload' }),
      store.put({ ...report, name: 'twin.txt' }, { idempotencyKey: 'run-4:upload' }),
    ]);
    expect(a).toEqual(b);
    expect(await readdir(join(dir, 'out'))).toEqual(['report.txt']);
  });

  it('refuses .stepwire-keys as a folder or file name', async () => {
    const store = new LocalFileStore({ dir });
    const asFolder = await store.put({ ...report, folder: '.stepwire-keys' }).catch((e: unknown) => e);
    const asName = await store
      .put({ name: '.stepwire-keys', contentType: 'text/plain', data: text('x') })
      .catch((e: unknown) => e);
    expect(asFolder).toBeInstanceOf(ValidationError);
    expect((asFolder as ValidationError).issues[0]).toMatchObject({ path: 'folder_id' });
    expect((asName as ValidationError).issues[0]).toMatchObject({ path: 'file_name' });
    expect((asName as Error).message).toMatch(/"\.stepwire-keys" is reserved for idempotency keys/);
  });

  it('stores once for one upload_file step run twice from its stored inputs', async () => {
    const store = new LocalFileStore({ dir });
    const engine = new Engine({ files: { local: store } });
    await engine.workflows.create({
      name: 'upload',
      steps: [
        {
          name: 'put',
          type: 'l2',
          l2_data: {
            provider: 'local',
            module: 'files',
            action: 'upload_file',
            input_data: { file_data: btoa('hello'), file_name: 'hello.txt', folder_id: 'notes' },
          },
        },
      ],
      wires: [],
      workflow_output: { name: 'output', output_data: { file_url: '{{put.file_url}}' } },
    });
    const run = await engine.run('upload');
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    // The step delivered again in a new process: the same key, a fresh store on the same folder.
    const again = await new LocalFileStore({ dir }).put(
      { name: 'hello.txt', folder: 'notes', contentType: 'text/plain', data: text('hello') },
      { idempotencyKey: `${run.id}:put` },
    );
    expect(again.url).toBe((run.output as { file_url: string }).file_url);
    expect(await readdir(join(dir, '.stepwire-keys'))).toHaveLength(1);
  });
});
