import { describe, expect, it } from 'vitest';
import type { FileStore } from '../adapters/types.js';
import { Engine } from '../engine/engine.js';
import { encodeBase64 } from '../pdf/base64.js';

/** Options of {@link describeFileStoreContract}. */
export interface FileStoreContractOptions {
  /** Name shown in the test report. */
  name: string;
  /** Makes a fresh, empty store; called once per test. */
  create(): FileStore | Promise<FileStore>;
  /** Cleans up after each test. */
  dispose?(store: FileStore): void | Promise<void>;
  /** A folder the store accepts (a Drive folder id, a sub-folder name). @default "reports" */
  folder?: string;
  /** Reads a stored file back when the store has no `get`; return undefined to skip byte checks. */
  read?(store: FileStore, url: string): Promise<Uint8Array | undefined> | Uint8Array | undefined;
}

/** Every byte value, twice, and a few bytes that text handling tends to break. */
const BYTES = new Uint8Array([
  ...Array.from({ length: 512 }, (_, i) => i % 256),
  0x0d,
  0x0a,
  0x00,
  0xef,
  0xbb,
  0xbf,
]);

/**
 * The contract every file store must pass: byte-exact round trips, folders, content types, and
 * `upload_file` through the engine. Run it with one call from a vitest file.
 * @example
 * ```ts
 * import { describeFileStoreContract } from 'stepwire/testing';
 * describeFileStoreContract({ name: 'memory', create: () => new MemoryFileStore() });
 * ```
 */
export function describeFileStoreContract(options: FileStoreContractOptions): void {
  const folder = options.folder ?? 'reports';
  const test = (title: string, body: (store: FileStore) => Promise<void>) =>
    it(title, async () => {
      const store = await options.create();
      try {
        await body(store);
      } finally {
        await options.dispose?.(store);
      }
    });
  const readBack = async (store: FileStore, url: string) =>
    options.read ? await options.read(store, url) : (await store.get?.(url))?.data;

  describe(`file store contract: ${options.name}`, () => {
    test('stores bytes exactly and hands back a url', async (store) => {
      const { url } = await store.put({
        name: 'all bytes.bin',
        folder,
        contentType: 'application/octet-stream',
        data: BYTES,
      });
      expect(typeof url).toBe('string');
      expect(url.length).toBeGreaterThan(0);
      const back = await readBack(store, url);
      if (back !== undefined) expect(new Uint8Array(back)).toEqual(BYTES);
    });

    test('keeps the content type', async (store) => {
      const { url } = await store.put({
        name: 'note.txt',
        folder,
        contentType: 'text/plain',
        data: new TextEncoder().encode('héllo'),
      });
      const back = await store.get?.(url);
      if (back) expect(back.contentType.split(';')[0]).toBe('text/plain');
    });

    test('gives different files different urls', async (store) => {
      const a = await store.put({
        name: 'a.txt',
        folder,
        contentType: 'text/plain',
        data: new Uint8Array([1]),
      });
      const b = await store.put({
        name: 'b.txt',
        folder,
        contentType: 'text/plain',
        data: new Uint8Array([2]),
      });
      expect(a.url).not.toBe(b.url);
    });

    test('through the engine: upload_file takes base64 and returns file_url', async (store) => {
      const engine = new Engine({ files: { store } });
      await engine.workflows.create({
        name: 'upload',
        steps: [
          {
            name: 'put',
            type: 'l2',
            l2_data: {
              provider: 'store',
              module: 'files',
              action: 'upload_file',
              input_data: {
                file_data: encodeBase64(BYTES),
                file_name: 'report.pdf',
                file_type: 'pdf',
                folder_id: folder,
              },
            },
          },
        ],
        wires: [],
        workflow_output: { name: 'output', output_data: { file_url: '{{put.file_url}}' } },
      });
      const run = await engine.run('upload');
      expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
      const url = (run.output as { file_url: string }).file_url;
      const back = await readBack(store, url);
      if (back !== undefined) expect(new Uint8Array(back)).toEqual(BYTES);
      const typed = await store.get?.(url);
      if (typed) expect(typed.contentType).toBe('application/pdf');
    });
  });
}
