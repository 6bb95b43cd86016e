import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { ValidationError } from '../../errors/index.js';
import { contentTypeOf } from '../content-type.js';
import { replaceFile } from './atomic-write.js';
import { RecentResults } from '../recent-results.js';
import type { CallOptions, FileInput, FileStore, StoredFile } from '../types.js';
import { LONE_SURROGATE, holdsLoneSurrogate } from '../../schema/well-formed.js';

/** Folder inside `dir` that holds one small record per idempotency key used; refused as a name. */
const KEYS_FOLDER = '.stepwire-keys';

/** Options of {@link LocalFileStore}. */
export interface LocalFileStoreOptions {
  /** The folder files are stored in; created when missing. */
  dir: string;
  /**
   * Base URL the folder is served at (e.g. `https://files.example.com/`); `file_url` is this plus
   * the file's path. Without it, `file_url` is a `file://` URL.
   */
  publicBaseUrl?: string;
}

/**
 * A file store on a local folder, for Node. File and folder names can never leave the folder:
 * `..`, absolute paths, separators inside a name and control characters are refused.
 *
 * A put with an `idempotencyKey` records the key and the url it returned in
 * `<dir>/.stepwire-keys/` (one small file per key, written atomically after the file itself), so a
 * put repeated with that key, even after a restart, writes nothing and returns the first url. The
 * name `.stepwire-keys` is therefore refused as a top folder or file name.
 * @example
 * ```ts
 * const engine = new Engine({ files: { local: new LocalFileStore({ dir: './out' }) } });
 * ```
 */
export class LocalFileStore implements FileStore {
  readonly #dir: string;
  readonly #publicBaseUrl: string | undefined;
  readonly #recent = new RecentResults<StoredFile>();

  constructor(options: LocalFileStoreOptions) {
    if (typeof options?.dir !== 'string' || options.dir === '')
      throw new TypeError('LocalFileStore needs options.dir, the folder to store files in');
    this.#dir = resolve(options.dir);
    this.#publicBaseUrl =
      options.publicBaseUrl === undefined ? undefined : options.publicBaseUrl.replace(/\/?$/, '/');
  }

  /**
   * Writes the file atomically (a temporary file, flushed to disk, renamed into place) and returns
   * its url. With an `idempotencyKey` already used, writes nothing and returns the first put's url.
   */
  async put(file: FileInput, options: CallOptions = {}): Promise<StoredFile> {
    const parts = [
      ...(file.folder ? safeSegments(file.folder, 'folder_id') : []),
      safeName(file.name, 'file_name'),
    ];
    if (parts[0] === KEYS_FOLDER)
      throw invalid(
        parts.length > 1 ? 'folder_id' : 'file_name',
        `"${KEYS_FOLDER}" is reserved for idempotency keys`,
      );
    const path = join(this.#dir, ...parts);
    if (!path.startsWith(this.#dir + sep))
      throw invalid('file_name', 'the file would be stored outside the folder');
    if (Buffer.byteLength(path) > MAX_PATH_BYTES)
      throw invalid(
        file.folder ? 'folder_id' : 'file_name',
        `the file's path would have more than ${MAX_PATH_BYTES} bytes, more than file systems take`,
      );
    const key = options.idempotencyKey;
    return this.#recent.run(key, async () => {
      const earlier = key === undefined ? undefined : await this.#recorded(key);
      if (earlier) return earlier;
      options.signal?.throwIfAborted();
      await mkdir(join(this.#dir, ...parts.slice(0, -1)), { recursive: true });
      await replaceFile(path, file.data, options.signal);
      const url = this.#publicBaseUrl
        ? this.#publicBaseUrl + parts.map(encodeURIComponent).join('/')
        : pathToFileURL(path).href;
      if (key !== undefined) await this.#record(key, { url });
      return { url };
    });
  }

  /** The path a url of this store names; `undefined` for another url or a malformed one (`%E0%A4%A`). */
  #pathOf(url: string): string | undefined {
    try {
      if (this.#publicBaseUrl && url.startsWith(this.#publicBaseUrl)) {
        const parts = url.slice(this.#publicBaseUrl.length).split('/').map(decodeURIComponent);
        return join(this.#dir, ...parts);
      }
      return url.startsWith('file:') ? fileURLToPath(url) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Reads a stored file back by its url; `undefined` when it is not one of this store's. */
  async get(url: string): Promise<{ data: Uint8Array; contentType: string } | undefined> {
    const path = this.#pathOf(url);
    if (path === undefined || !path.startsWith(this.#dir + sep)) return undefined;
    try {
      const data = new Uint8Array(await readFile(path));
      return { data, contentType: contentTypeOf(undefined, path) };
    } catch {
      return undefined;
    }
  }

  /** Where the record of an idempotency key lives: its SHA-256, so any key makes a safe name. */
  #keyPath(key: string): string {
    return join(this.#dir, KEYS_FOLDER, `${createHash('sha256').update(key).digest('hex')}.json`);
  }

  /** The stored file a put with `key` returned, when one did. */
  async #recorded(key: string): Promise<StoredFile | undefined> {
    let text: string;
    try {
      text = await readFile(this.#keyPath(key), 'utf8');
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return undefined;
      throw error;
    }
    const record = JSON.parse(text) as { key?: unknown; url?: unknown };
    return record.key === key && typeof record.url === 'string' ? { url: record.url } : undefined;
  }

  /** Records what a put with `key` returned, atomically. */
  async #record(key: string, stored: StoredFile): Promise<void> {
    await mkdir(join(this.#dir, KEYS_FOLDER), { recursive: true });
    const record = JSON.stringify({ key, url: stored.url, at: new Date().toISOString() });
    await replaceFile(this.#keyPath(key), new TextEncoder().encode(record));
  }
}

/**
 * `name` when it is a single file or folder name that stays inside its folder; otherwise a
 * `ValidationError` (code `invalid_file_name`) whose path is `field`. Refuses `""`, `.`, `..`, `/`,
 * `\\` and control characters (NUL included).
 * @internal
 */
export function safeName(name: string, field: string): string {
  if (name === '' || name === '.' || name === '..') throw invalid(field, `"${name}" is not a file name`);
  if (/[/\\]/.test(name)) throw invalid(field, `"${name}" may not contain "/" or "\\"`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(name)) throw invalid(field, 'control characters are not allowed in names');
  if (holdsLoneSurrogate(name)) throw invalid(field, `a name ${LONE_SURROGATE}`);
  const bytes = new TextEncoder().encode(name).length;
  if (bytes > MAX_NAME_BYTES)
    throw invalid(field, `a name may have at most ${MAX_NAME_BYTES} bytes of UTF-8, this one has ${bytes}`);
  return name;
}

/**
 * Longest name of a file or folder, in bytes of UTF-8: file systems allow 255, and a file is first
 * written under a temporary name made longer by a suffix (pid, random part).
 */
export const MAX_NAME_BYTES = 220;

/** Longest path of a stored file, in bytes of UTF-8 (Linux takes 4,096, with the temporary suffix). */
const MAX_PATH_BYTES = 4000;

function safeSegments(folder: string, field: string): string[] {
  return folder
    .split('/')
    .filter((part) => part !== '')
    .map((part) => safeName(part, field));
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError([{ code: 'invalid_file_name', path, message }]);
}
