import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalFileStore } from '../../src/adapters/node/index.js';
import { Engine, MemoryFileStore, ValidationError } from '../../src/index.js';
import { describeFileStoreContract } from '../../src/testing/index.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepwire-files-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('LocalFileStore', () => {
  it('stores bytes exactly, in a folder, and reads them back by url', async () => {
    const store = new LocalFileStore({ dir });
    const data = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x0a]);
    const { url } = await store.put({
      name: 'a b.pdf',
      folder: 'invoices/2026',
      contentType: 'application/pdf',
      data,
    });
    expect(url.startsWith('file://')).toBe(true);
    expect(new Uint8Array(await readFile(join(dir, 'invoices', '2026', 'a b.pdf')))).toEqual(data);
    expect(await store.get(url)).toEqual({ data, contentType: 'application/pdf' });
  });

  it('hands out urls under publicBaseUrl when given', async () => {
    const store = new LocalFileStore({ dir, publicBaseUrl: 'https://files.example.com/x' });
    const { url } = await store.put({
      name: 'r&d.txt',
      contentType: 'text/plain',
      data: new TextEncoder().encode('hi'),
    });
    expect(url).toBe('https://files.example.com/x/r%26d.txt');
    expect(new TextDecoder().decode((await store.get(url))!.data)).toBe('hi');
    // A url that is not one of its files, even a malformed one, is not found rather than an error.
    for (const other of [
      'https://files.example.com/x/%E0%A4%A',
      'https://files.example.com/x/../../etc/passwd',
      'file://host/x.txt',
      'https://elsewhere.example.com/x/r%26d.txt',
    ])
      expect(await store.get(other)).toBeUndefined();
  });

  it.each([
    ['..', undefined],
    ['../escape.txt', undefined],
    ['x/../../escape.txt', undefined],
    ['ok.txt', '../..'],
    ['ok.txt', 'a/../../b'],
    ['nul\u0000.txt', undefined],
    ['back\\slash.txt', undefined],
  ])('refuses a name that could leave the folder: %j in %j', async (name, folder) => {
    const store = new LocalFileStore({ dir });
    const file = { name, contentType: 'text/plain', data: new Uint8Array([1]) };
    await expect(store.put(folder === undefined ? file : { ...file, folder })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses a name over 220 bytes, half a surrogate pair, or a path too long, naming the field; stores 220 bytes', async () => {
    const store = new LocalFileStore({ dir });
    const file = (name: string, folder?: string) => ({
      name,
      ...(folder === undefined ? {} : { folder }),
      contentType: 'text/plain',
      data: new Uint8Array([1]),
    });
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => expect.fail('expected a refusal'),
        (error: unknown) => (error as ValidationError).issues,
      );
    expect(await refusal(store.put(file('n'.repeat(221))))).toEqual([
      {
        code: 'invalid_file_name',
        path: 'file_name',
        message: 'a name may have at most 220 bytes of UTF-8, this one has 221',
      },
    ]);
    expect(await refusal(store.put(file('é'.repeat(111))))).toMatchObject([{ path: 'file_name' }]);
    expect(await refusal(store.put(file('report-\uD800.txt')))).toEqual([
      {
        code: 'invalid_file_name',
        path: 'file_name',
        message: 'a name must be well-formed text (it holds half of a surrogate pair)',
      },
    ]);
    expect(await refusal(store.put(file('x.txt', Array(30).fill('f'.repeat(200)).join('/'))))).toMatchObject([
      { code: 'invalid_file_name', path: 'folder_id' },
    ]);
    expect(await readdir(dir)).toEqual([]);
    await store.put(file('n'.repeat(220)));
    expect(await readdir(dir)).toEqual(['n'.repeat(220)]);
  });

  it('fails an upload_file step whose name holds half a surrogate pair at once, naming file_name, storing nothing', async () => {
    const memory = new MemoryFileStore();
    const engine = new Engine({ files: { local: new LocalFileStore({ dir }), memory } });
    for (const provider of ['local', 'memory']) {
      await engine.workflows.replace({
        name: 'upload',
        steps: [
          {
            name: 'put',
            type: 'l2',
            l2_data: {
              provider,
              module: 'files',
              action: 'upload_file',
              input_data: { file_data: btoa('x'), file_name: '{{input.name}}' },
            },
            retry: { attempts: 3, backoff_ms: 1 },
          },
        ],
        wires: [],
      });
      const run = await engine.run('upload', { name: 'report-\uD800.txt' });
      expect(run.error).toMatchObject({ code: 'validation_failed', step: 'put' });
      expect(run.error!.message).toContain(
        'file_name must be well-formed text (it holds half of a surrogate pair)',
      );
      expect(run.steps[0]!.attempts).toBe(1);
    }
    expect(await readdir(dir)).toEqual([]);
    expect(memory.files).toEqual([]);
  });

  it('is the file store of upload_file steps named by their provider; file_data takes base64', async () => {
    const engine = new Engine({ files: { local: new LocalFileStore({ dir }) } });
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
            input_data: {
              file_data: btoa('hello'),
              file_name: 'hello.txt',
              file_type: 'txt',
              folder_id: 'notes',
            },
          },
        },
      ],
      wires: [],
      workflow_output: { name: 'output', output_data: { file_url: '{{put.file_url}}' } },
    });
    const run = await engine.run('upload');
    expect(run.status).toBe('succeeded');
    expect(await readFile(join(dir, 'notes', 'hello.txt'), 'utf8')).toBe('hello');
    const bad = await engine.workflows
      .create({
        name: 'escape',
        steps: [
          {
            name: 'put',
            type: 'l2',
            l2_data: {
              provider: 'local',
              module: 'files',
              action: 'upload_file',
              input_data: { file_data: btoa('x'), file_name: '../../etc/passwd' },
            },
          },
        ],
        wires: [],
      })
      .then(() => engine.run('escape'));
    expect(bad.status).toBe('failed');
    expect(bad.error?.message).toMatch(/file_name/);
  });
});

describeFileStoreContract({
  name: 'LocalFileStore',
  create: async () => new LocalFileStore({ dir: await mkdtemp(join(tmpdir(), 'stepwire-contract-')) }),
});
