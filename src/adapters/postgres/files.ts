import { createHash, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { LimitError, ValidationError } from '../../errors/index.js';
import { StorageError } from '../../errors/storage-error.js';
import { holdsLoneSurrogate } from '../../schema/well-formed.js';
import type { CallOptions, FileInput, FileStore, StoredFile } from '../types.js';
import type { Tables } from './tables.js';

/** Options of the file store `openPostgres` makes (`options.files`). */
export interface PostgresFilesOptions {
  /**
   * Prefix of the `file_url`s the store hands out: the file's path (folder, then name) is appended,
   * each part URL-encoded. Give the address the files are served at, e.g.
   * `https://flows.example.com/files/`; {@link PostgresFileStore.withOptions} gives a store with
   * another one on the same table.
   * @default "/files/"
   */
  baseUrl?: string;
  /**
   * Largest file stored, in bytes; a larger one is refused with a `LimitError` (`files.maxBytes`)
   * and nothing is stored.
   * @default 10485760 (10 MiB, the upload limit of `upload_file`)
   */
  maxBytes?: number;
}

/** A stored file opened with {@link PostgresFileStore.open}: what it is, and its bytes as a stream. */
export interface OpenedFile {
  /** The file's path in the store: its folder and name, joined by `/`. */
  path: string;
  /** Its MIME type, as stored. */
  contentType: string;
  /** Its size in bytes. */
  size: number;
  /** Changes whenever the file is stored again (an HTTP entity tag, quoted). */
  etag: string;
  /**
   * The bytes, read from the database a part at a time as the stream is read. A file stored again
   * while it is read errors the stream rather than mixing two files.
   */
  body: ReadableStream<Uint8Array>;
}

/** Bytes read from the database at once while a file is streamed. */
const CHUNK_BYTES = 256 * 1024;
/** Default of {@link PostgresFilesOptions.maxBytes}: the upload limit. */
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/** Longest path (folder and name) a stored file may have, in bytes of UTF-8. */
const MAX_PATH_BYTES = 1024;
/** Longest file or folder name, in bytes of UTF-8, as file systems allow. */
const MAX_NAME_BYTES = 255;
/** A MIME type as `Content-Type` may carry it: `type/subtype`, optionally with parameters. */
const MEDIA_TYPE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+(?:\s*;[\x20-\x7e]*)?$/;

/**
 * Files in the database, shared by every process that opens it (`openPostgres` returns one as
 * `files`): one row per file, its bytes a `bytea` value. Stored whole in one statement, read back as
 * a stream a part at a time. A folder and name stored again replace the earlier file.
 *
 * Exactly once by key: a put with an `idempotencyKey` records the key in the same transaction as
 * the file, so a put repeated with that key (a step delivered again, by any process) stores nothing
 * and returns the first put's url.
 * @example
 * ```ts
 * const db = await openPostgres(process.env.DATABASE_URL);
 * const engine = new Engine({ storage: db.storage, queue: db.queue, files: { shared: db.files } });
 * ```
 */
export class PostgresFileStore implements FileStore {
  readonly #db: Kysely<Tables>;
  readonly #where: string;
  readonly #isClosed: () => boolean;
  readonly #maxBytes: number;
  /** Prefix of the urls it hands out, ending in `/`. */
  readonly baseUrl: string;

  /**
   * @internal Made by `openPostgres`: `db` is scoped to the schema; `isClosed` tells when it was
   * closed; `options` as {@link resolveFilesOptions} gives them.
   */
  constructor(
    db: Kysely<Tables>,
    where: string,
    isClosed: () => boolean,
    options: Required<PostgresFilesOptions>,
  ) {
    this.#db = db;
    this.#where = where;
    this.#isClosed = isClosed;
    this.#maxBytes = options.maxBytes;
    this.baseUrl = options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`;
  }

  /**
   * The same files (the same table), with other options: the urls a server hands out once it knows
   * its address, or another size limit. Options left out keep this store's.
   * @throws TypeError naming an option that is not valid.
   */
  withOptions(options: PostgresFilesOptions): PostgresFileStore {
    const resolved = resolveFilesOptions(
      { baseUrl: this.baseUrl, maxBytes: this.#maxBytes, ...options },
      'PostgresFileStore.withOptions',
    );
    return new PostgresFileStore(this.#db, this.#where, this.#isClosed, resolved);
  }

  /**
   * Stores the file (replacing one of the same folder and name) and returns its url. With an
   * `idempotencyKey` already used, stores nothing and returns the first put's url.
   * @throws `LimitError` (`files.maxBytes`) for a file over the size limit; `ValidationError`
   *   (`invalid_file_name`) for a name or folder that is not a plain name (`..`, `/` in a name,
   *   control characters) or a path too long.
   */
  async put(file: FileInput, options: CallOptions = {}): Promise<StoredFile> {
    const path = filePath(file);
    if (file.data.byteLength > this.#maxBytes)
      throw new LimitError(
        'files.maxBytes',
        `the file "${file.name}" is ${file.data.byteLength} bytes, over the file store's limit of ${this.#maxBytes} bytes`,
      );
    options.signal?.throwIfAborted();
    const row = {
      path,
      content_type: MEDIA_TYPE.test(file.contentType) ? file.contentType : 'application/octet-stream',
      size: file.data.byteLength,
      data: file.data,
      etag: randomUUID(),
    };
    const key = options.idempotencyKey;
    const stored = await this.#open()
      .transaction()
      .execute(async (tx) => {
        if (key !== undefined) {
          // The key is claimed first: a second put with it waits here for the first to commit, then
          // finds the key taken and returns what the first stored.
          const hash = keyHash(key);
          const claimed = await tx
            .insertInto('file_keys')
            .values({ key: hash, path })
            .onConflict((c) => c.column('key').doNothing())
            .returning('key')
            .executeTakeFirst();
          if (claimed === undefined) {
            const earlier = await tx
              .selectFrom('file_keys')
              .select('path')
              .where('key', '=', hash)
              .executeTakeFirstOrThrow();
            return earlier.path;
          }
        }
        await tx
          .insertInto('files')
          .values(row)
          .onConflict((c) =>
            c.column('path').doUpdateSet((eb) => ({
              content_type: eb.ref('excluded.content_type'),
              size: eb.ref('excluded.size'),
              data: eb.ref('excluded.data'),
              etag: eb.ref('excluded.etag'),
              updated_at: sql`now()`,
            })),
          )
          .execute();
        return path;
      });
    return { url: this.urlOf(stored) };
  }

  /** The whole file a url of this store names, with its type; `undefined` for another url or no file. */
  async get(
    url: string,
    options?: CallOptions,
  ): Promise<{ data: Uint8Array; contentType: string } | undefined> {
    const path = this.pathOf(url);
    if (path === undefined) return undefined;
    const row = await this.#open()
      .selectFrom('files')
      .select(['content_type', 'data'])
      .where('path', '=', path)
      .executeTakeFirst(abortable(options));
    return row && { data: bytesOf(row.data), contentType: row.content_type };
  }

  /**
   * Opens the file at `path` (its folder and name joined by `/`, as {@link PostgresFileStore.pathOf}
   * gives it) to stream it; `undefined` when there is none. A file of up to 256 KiB is read in this
   * one query; a larger one a part at a time as `body` is read.
   */
  async open(path: string, options?: CallOptions): Promise<OpenedFile | undefined> {
    if (unstorable(path)) return undefined;
    const db = this.#open();
    const row = await db
      .selectFrom('files')
      .select([
        'content_type',
        'size',
        'etag',
        sql<Uint8Array>`substring(${sql.ref('data')} from 1 for ${CHUNK_BYTES})`.as('head'),
      ])
      .where('path', '=', path)
      .executeTakeFirst(abortable(options));
    if (row === undefined) return undefined;
    const size = Number(row.size);
    let offset = 0;
    let head: Uint8Array | undefined = bytesOf(row.head);
    const etag = row.etag;
    const where = this.#where;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (head !== undefined) {
            const chunk = head;
            head = undefined;
            offset += chunk.byteLength;
            if (chunk.byteLength > 0) controller.enqueue(chunk);
          } else {
            const next = await db
              .selectFrom('files')
              .select(
                sql<Uint8Array>`substring(${sql.ref('data')} from ${offset + 1} for ${CHUNK_BYTES})`.as(
                  'chunk',
                ),
              )
              .where('path', '=', path)
              .where('etag', '=', etag)
              .executeTakeFirst();
            if (next === undefined) {
              controller.error(
                new StorageError(
                  'unavailable',
                  `the file "${path}" was stored again or removed while it was read`,
                  where,
                ),
              );
              return;
            }
            const chunk = bytesOf(next.chunk);
            offset += chunk.byteLength;
            controller.enqueue(chunk);
          }
          if (offset >= size) controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    return { path, contentType: row.content_type, size, etag: `"${etag}"`, body };
  }

  /** The url this store hands out for a file at `path` (folder and name joined by `/`). */
  urlOf(path: string): string {
    return this.baseUrl + path.split('/').map(encodeURIComponent).join('/');
  }

  /**
   * The path of the file a url of this store names (its parts URL-decoded), or `undefined` for a url
   * that does not start with {@link PostgresFileStore.baseUrl} or is not validly encoded.
   */
  pathOf(url: string): string | undefined {
    if (!url.startsWith(this.baseUrl)) return undefined;
    try {
      return url.slice(this.baseUrl.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      return undefined;
    }
  }

  #open(): Kysely<Tables> {
    if (this.#isClosed()) throw new StorageError('closed', `${this.#where} was closed`, this.#where);
    return this.#db;
  }
}

/**
 * `options.files` of `openPostgres` with the defaults filled in. @internal
 * @throws TypeError naming the option that is not valid.
 */
export function resolveFilesOptions(
  options: PostgresFilesOptions | undefined,
  caller = 'openPostgres: options.files',
): Required<PostgresFilesOptions> {
  if (options === undefined) return { baseUrl: '/files/', maxBytes: DEFAULT_MAX_BYTES };
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${caller} must be an object ({ baseUrl?, maxBytes? })`);
  const { baseUrl = '/files/', maxBytes = DEFAULT_MAX_BYTES } = options;
  if (typeof baseUrl !== 'string' || baseUrl === '')
    throw new TypeError(`${caller}: baseUrl must be a non-empty string such as "/files/"`);
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 1)
    throw new TypeError(
      `${caller}: maxBytes must be a whole number of bytes, 1 or more (got ${String(maxBytes)})`,
    );
  return { baseUrl, maxBytes };
}

/**
 * A file's path: its folder's parts (empty ones left out) and its name, joined by `/`. Every part is
 * a plain name: not empty, `.` or `..`, without `/`, `\`, control characters or half of a surrogate
 * pair (which Postgres text cannot hold).
 */
function filePath(file: FileInput): string {
  const folder = (file.folder ?? '').split('/').filter((part) => part !== '');
  for (const part of folder) checkName(part, 'folder_id');
  checkName(file.name, 'file_name');
  const path = [...folder, file.name].join('/');
  const bytes = new TextEncoder().encode(path).byteLength;
  if (bytes > MAX_PATH_BYTES)
    throw invalid(
      folder.length > 0 ? 'folder_id' : 'file_name',
      `the file's folder and name have ${bytes} bytes of UTF-8, more than ${MAX_PATH_BYTES}`,
    );
  return path;
}

function checkName(name: string, field: string): void {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..')
    throw invalid(field, `"${String(name)}" is not a file or folder name`);
  if (/[/\\]/.test(name)) throw invalid(field, `"${name}" may not contain "/" or "\\"`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw invalid(field, 'control characters are not allowed in names');
  if (holdsLoneSurrogate(name)) throw invalid(field, 'a name may not hold half of a surrogate pair');
  const bytes = new TextEncoder().encode(name).byteLength;
  if (bytes > MAX_NAME_BYTES)
    throw invalid(field, `a name may have at most ${MAX_NAME_BYTES} bytes of UTF-8, this one has ${bytes}`);
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError([{ code: 'invalid_file_name', path, message }]);
}

/** Whether no stored path can be `path` (Postgres text holds no U+0000 nor half a surrogate pair). */
function unstorable(path: string): boolean {
  return path.includes('\u0000') || holdsLoneSurrogate(path);
}

/** The key as stored: its SHA-256 in hex, so any key (of any length or character) fits. */
function keyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A `bytea` value as a plain `Uint8Array` of its own (node-postgres gives a `Buffer`). */
function bytesOf(value: Uint8Array): Uint8Array {
  return new Uint8Array(value);
}

function abortable(options: CallOptions | undefined): { signal: AbortSignal } | undefined {
  return options?.signal ? { signal: options.signal } : undefined;
}
