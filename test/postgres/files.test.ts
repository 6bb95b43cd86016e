import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, PostgresFileStore, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import type { FileStore } from '../../src/adapters/types.js';
import { isLimitError, isStorageError, ValidationError } from '../../src/index.js';
import { describeFileStoreContract } from '../../src/testing/index.js';
import { reachServer, testSchemas } from './server.js';

const url = await reachServer();
const schemas = testSchemas(url);
const open = new Map<FileStore, PostgresDatabase>();
// Creating a PGlite database costs seconds (initdb): one instance, a fresh schema per test.
let memory: PGlite | undefined;
const pglite = async () => (memory ??= await PGlite.create());

async function opened(db: PostgresDatabase): Promise<FileStore> {
  open.set(db.files, db);
  return db.files;
}
const dispose = async (store: FileStore) => {
  await open.get(store)?.close();
  open.delete(store);
};

afterAll(async () => {
  for (const db of open.values()) await db.close();
  await memory?.close();
  await schemas.drop();
});

describeFileStoreContract({
  name: 'Postgres files on in-memory PGlite',
  create: async () => opened(await openPostgres({ pglite: await pglite() }, { schema: schemas.next() })),
  dispose,
});

if (url)
  describeFileStoreContract({
    name: 'Postgres files on the PostgreSQL server',
    create: async () => opened(await openPostgres(url, { schema: schemas.next() })),
    dispose,
  });

/** `n` bytes that do not compress, so a large file is stored as it is. */
function noise(n: number): Uint8Array {
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i += 65_536) crypto.getRandomValues(bytes.subarray(i, Math.min(n, i + 65_536)));
  return bytes;
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Uint8Array; chunks: number }> {
  const parts: Uint8Array[] = [];
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) parts.push(read.value);
  const bytes = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return { bytes, chunks: parts.length };
}

type Open = (schema: string, files?: { maxBytes: number }) => Promise<PostgresDatabase>;
const targets: [string, Open][] = [
  [
    'in-memory PGlite',
    async (schema, files) =>
      openPostgres({ pglite: await pglite() }, { schema, ...(files ? { files } : {}) }),
  ],
];
if (url)
  targets.push([
    'the PostgreSQL server',
    (schema, files) => openPostgres(url, { schema, ...(files ? { files } : {}) }),
  ]);

/** Whether two byte arrays hold the same bytes (quicker than a deep equality of large arrays). */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

describe.each(targets)('PostgresFileStore on %s', (_, make) => {
  const db = async (schema = schemas.next(), files?: { maxBytes: number }) => {
    const made = await make(schema, files);
    open.set(made.files, made);
    return made;
  };

  it('hands out /files/<folder>/<name> urls, each part encoded, and reads them back', async () => {
    const { files } = await db();
    const data = new TextEncoder().encode('%PDF-1.7 invoice');
    const { url: at } = await files.put({
      name: 'a b&c.pdf',
      folder: '2026/ä',
      contentType: 'application/pdf',
      data,
    });
    expect(at).toBe('/files/2026/%C3%A4/a%20b%26c.pdf');
    expect(files.pathOf(at)).toBe('2026/ä/a b&c.pdf');
    expect(await files.get(at)).toEqual({ data, contentType: 'application/pdf' });
    const served = files.withOptions({ baseUrl: 'https://flows.example.test/files/' });
    expect(await served.get('https://flows.example.test/files/2026/%C3%A4/a%20b%26c.pdf')).toEqual({
      data,
      contentType: 'application/pdf',
    });
    expect(await files.get('https://elsewhere.test/files/2026/%C3%A4/a%20b%26c.pdf')).toBeUndefined();
    expect(await files.get('/files/%E0%A4%A')).toBeUndefined();
    expect(await files.open('no/such.pdf')).toBeUndefined();
  });

  it('streams a large file a part at a time, byte for byte', async () => {
    const { files } = await db();
    const data = noise(700 * 1024 + 3);
    await files.put({ name: 'big.bin', contentType: 'application/octet-stream', data });
    const opened = (await files.open('big.bin'))!;
    expect(opened).toMatchObject({ contentType: 'application/octet-stream', size: data.byteLength });
    expect(opened.etag).toMatch(/^"[0-9a-f-]{36}"$/);
    const { bytes, chunks } = await readAll(opened.body);
    expect(chunks).toBe(3);
    expect(same(bytes, data)).toBe(true);
    // An empty file is a stream with no bytes.
    await files.put({ name: 'empty.txt', contentType: 'text/plain', data: new Uint8Array() });
    const empty = (await files.open('empty.txt'))!;
    expect(empty.size).toBe(0);
    expect((await readAll(empty.body)).bytes.byteLength).toBe(0);
  });

  it('a file stored again while it is streamed errors the stream instead of mixing two files', async () => {
    const { files } = await db();
    await files.put({ name: 'x.bin', contentType: 'application/octet-stream', data: noise(600 * 1024) });
    const opened = (await files.open('x.bin'))!;
    const reader = opened.body.getReader();
    expect((await reader.read()).value!.byteLength).toBe(256 * 1024);
    await files.put({ name: 'x.bin', contentType: 'application/octet-stream', data: noise(600 * 1024) });
    const error = await reader.read().catch((e: unknown) => e);
    expect(isStorageError(error)).toBe(true);
    expect((error as Error).message).toContain('was stored again or removed while it was read');
    expect((await files.open('x.bin'))!.etag).not.toBe(opened.etag);
  });

  it('exactly once by idempotency key: a put repeated with its key stores nothing and answers the first url', async () => {
    const { files } = await db();
    const first = await files.put(
      { name: 'invoice-1.pdf', contentType: 'application/pdf', data: new Uint8Array([1]) },
      { idempotencyKey: 'run-1:upload' },
    );
    const again = await files.put(
      { name: 'invoice-1-renamed.pdf', contentType: 'application/pdf', data: new Uint8Array([2]) },
      { idempotencyKey: 'run-1:upload' },
    );
    expect(again).toEqual(first);
    expect((await files.get(first.url))!.data).toEqual(new Uint8Array([1]));
    expect(await files.open('invoice-1-renamed.pdf')).toBeUndefined();
    // Puts with the same key at once: one stores, all answer its url.
    const racing = await Promise.all(
      [3, 4, 5, 6].map((n) =>
        files.put(
          { name: `race-${n}.pdf`, contentType: 'application/pdf', data: new Uint8Array([n]) },
          { idempotencyKey: 'run-2:upload' },
        ),
      ),
    );
    expect(new Set(racing.map((stored) => stored.url)).size).toBe(1);
    const stored = await Promise.all([3, 4, 5, 6].map((n) => files.open(`race-${n}.pdf`)));
    expect(stored.filter((file) => file !== undefined)).toHaveLength(1);
    // Without a key, the same folder and name replace the file.
    await files.put({ name: 'invoice-1.pdf', contentType: 'text/plain', data: new Uint8Array([9]) });
    expect(await files.get(first.url)).toEqual({ data: new Uint8Array([9]), contentType: 'text/plain' });
  });

  it('refuses a file over the size limit and names that are no plain names; nothing is stored', async () => {
    const made = await db(schemas.next(), { maxBytes: 1000 });
    const over = await made.files
      .put({ name: 'big.pdf', contentType: 'application/pdf', data: new Uint8Array(1001) })
      .catch((e: unknown) => e);
    expect(isLimitError(over)).toBe(true);
    expect((over as Error).message).toContain('1001 bytes, over the file store');
    await made.files.put({ name: 'fits.pdf', contentType: 'application/pdf', data: new Uint8Array(1000) });
    for (const [name, folder] of [
      ['..', undefined],
      ['a/b.pdf', undefined],
      ['a\\b.pdf', undefined],
      ['nul\u0000.pdf', undefined],
      ['half\ud800.pdf', undefined],
      ['ok.pdf', 'x/../y'],
      ['x'.repeat(256), undefined],
    ] as const) {
      const error = await made.files
        .put({ name, ...(folder ? { folder } : {}), contentType: 'text/plain', data: new Uint8Array([1]) })
        .catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues[0]!.code).toBe('invalid_file_name');
    }
    expect(await made.files.open('big.pdf')).toBeUndefined();
    // A content type that is no MIME type is stored as bytes of no known type.
    const { url: odd } = await made.files.put({
      name: 'odd',
      contentType: 'text/html\r\nx-injected: 1',
      data: new Uint8Array([1]),
    });
    expect((await made.files.get(odd))!.contentType).toBe('application/octet-stream');
  });

  it('is shared by everything that opens the database, and refuses calls once closed', async () => {
    const schema = schemas.next();
    const first = await db(schema);
    const { url: at } = await first.files.put({
      name: 'shared.txt',
      contentType: 'text/plain',
      data: new TextEncoder().encode('hello'),
    });
    const second = await db(schema);
    expect(new TextDecoder().decode((await second.files.get(at))!.data)).toBe('hello');
    await first.close();
    const error = await first.files.get(at).catch((e: unknown) => e);
    expect(isStorageError(error) && error.code).toBe('closed');
  });
});

describe('openPostgres options.files', () => {
  it('refuses options of the wrong shape before it opens anything', async () => {
    await expect(openPostgres(undefined, { files: { maxBytes: 0 } })).rejects.toThrow(
      'openPostgres: options.files: maxBytes must be a whole number of bytes',
    );
    await expect(openPostgres(undefined, { files: { baseUrl: '' } })).rejects.toThrow(TypeError);
    await expect(openPostgres(undefined, { files: 'x' as never })).rejects.toThrow(
      'options.files must be an object',
    );
    expect(PostgresFileStore.name).toBe('PostgresFileStore');
  });
});
