import type { CallOptions, FileInput, FileStore, StoredFile } from '../types.js';
import { ValidationError } from '../../errors/index.js';
import { LONE_SURROGATE, holdsLoneSurrogate } from '../../schema/well-formed.js';

/** Options of {@link MemoryFileStore}. */
export interface MemoryFileStoreOptions {
  /**
   * Prefix of the urls it hands out.
   * @default "memory://files/"
   */
  baseUrl?: string;
}

/** A file held by {@link MemoryFileStore}. */
export interface MemoryFile {
  /** Its url. */
  url: string;
  /** File name. */
  name: string;
  /** Folder, when given. */
  folder?: string;
  /** MIME type. */
  contentType: string;
  /** The bytes. */
  data: Uint8Array;
}

/** An in-memory file store; the default `memory` provider of `upload_file`. */
export class MemoryFileStore implements FileStore {
  #files = new Map<string, MemoryFile>();
  /** What each idempotency key's first put returned. */
  #byKey = new Map<string, StoredFile>();
  #baseUrl: string;

  constructor(options: MemoryFileStoreOptions = {}) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError('MemoryFileStore options must be an object ({ baseUrl? })');
    this.#baseUrl = options.baseUrl ?? 'memory://files/';
  }

  /**
   * Stores a copy of the file; the same folder and name replace the earlier file. With an
   * `idempotencyKey` already used, stores nothing and returns the first put's url.
   */
  put(file: FileInput, options: CallOptions = {}): StoredFile {
    for (const [field, text] of [
      ['file_name', file.name],
      ['folder_id', file.folder ?? ''],
    ] as const)
      if (holdsLoneSurrogate(text))
        throw new ValidationError([
          { code: 'invalid_file_name', path: field, message: `a name ${LONE_SURROGATE}` },
        ]);
    const key = options.idempotencyKey;
    const earlier = key === undefined ? undefined : this.#byKey.get(key);
    if (earlier) return { ...earlier };
    const path = [file.folder, file.name]
      .filter((part): part is string => !!part)
      .map(encodeURIComponent)
      .join('/');
    const url = this.#baseUrl + path;
    const stored: MemoryFile = {
      url,
      name: file.name,
      contentType: file.contentType,
      data: file.data.slice(),
    };
    if (file.folder !== undefined) stored.folder = file.folder;
    this.#files.set(url, stored);
    if (key !== undefined) this.#byKey.set(key, { url });
    return { url };
  }

  /** The stored bytes and type. */
  get(url: string): { data: Uint8Array; contentType: string } | undefined {
    const file = this.#files.get(url);
    return file && { data: file.data.slice(), contentType: file.contentType };
  }

  /** The bytes stored under `file_url`, or `undefined`. */
  read(fileUrl: string): Uint8Array | undefined {
    return this.#files.get(fileUrl)?.data.slice();
  }

  /** Every stored file, in the order stored. */
  get files(): MemoryFile[] {
    return [...this.#files.values()].map((file) => ({ ...file, data: file.data.slice() }));
  }
}
