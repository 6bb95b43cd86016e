/**
 * Where a command keeps the files a project's `upload_file` steps store (provider `memory`): the
 * database's file store, shared by every process on it, a folder given by `--files`, or memory; and
 * how `serve` answers `GET /files/...` from it.
 * @module
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { MemoryFileStore } from '../adapters/memory/index.js';
import { LocalFileStore } from '../adapters/node/local-file-store.js';
import type { PostgresFileStore } from '../adapters/postgres/index.js';
import type { FileStore } from '../adapters/types.js';
import { problem, problemResponse } from '../http/problem.js';
import { UsageError } from './io.js';

/** The path stored files are served under. @internal */
export const FILES_PATH = '/files/';

/** The files of a command: the store `upload_file` steps put into, and how `serve` reads them back. @internal */
export interface CommandFiles {
  /** The store behind the project's `memory` provider; undefined leaves the project its memory store. */
  store: FileStore | undefined;
  /** Where the files are kept, for the start-up message. */
  where: string;
  /**
   * Answers a `GET` or `HEAD` of `/files/<rest>` (`rest` as the request path has it, URL-encoded):
   * the file with its type, or a 404 problem.
   */
  answer(rest: string, request: Request, memory: MemoryFileStore): Promise<Response>;
}

/**
 * The files of a command: in the folder `dir` (`--files`) when given, else in the database's file
 * store when one is open, else in memory. `baseUrl` starts the urls handed out (ending in `/files/`);
 * `maxBytes` is the database store's size limit (the project's `limits.uploadMaxBytes`, when set).
 * @internal
 */
export function commandFiles(
  database: { files: PostgresFileStore | undefined; where: string },
  { dir, baseUrl, maxBytes }: { dir: string | undefined; baseUrl: string; maxBytes: number | undefined },
): CommandFiles {
  if (dir !== undefined) {
    const store = new LocalFileStore({ dir, publicBaseUrl: baseUrl });
    return {
      store,
      where: `the folder ${resolve(dir)}`,
      async answer(rest, request) {
        // The folder's record of idempotency keys is no stored file.
        if (rest.split('/')[0] === KEYS_FOLDER) return missing(rest);
        const file = await store.get(baseUrl + rest);
        if (!file) return missing(rest);
        return fileAnswer(request, { contentType: file.contentType, size: file.data.byteLength }, file.data);
      },
    };
  }
  const files = database.files?.withOptions({ baseUrl, ...(maxBytes === undefined ? {} : { maxBytes }) });
  if (files !== undefined)
    return {
      store: files,
      where: `the database (${database.where})`,
      async answer(rest, request) {
        const path = files.pathOf(files.baseUrl + rest);
        // A HEAD needs no bytes, and a file the client has (its ETag) is not sent again.
        const file = path === undefined ? undefined : await files.open(path, { signal: request.signal });
        if (!file) return missing(rest);
        const answered = fileAnswer(request, file, file.body);
        if (answered.body === null) void file.body.cancel().catch(() => undefined);
        return answered;
      },
    };
  return {
    store: undefined,
    where: 'memory (gone when the process stops)',
    async answer(rest, request, memory) {
      const file = memory.get(baseUrl + rest);
      if (!file) return missing(rest);
      return fileAnswer(request, { contentType: file.contentType, size: file.data.byteLength }, file.data);
    },
  };
}

/**
 * The `--files` option: a folder (created at the first file stored), not a file.
 * @throws {@link UsageError} naming the option.
 * @internal
 */
export async function parseFilesDir(value: unknown, command: string): Promise<string | undefined> {
  if (value === undefined) return undefined;
  const dir = String(value);
  if (dir.trim() === '') throw new UsageError('--files must name a folder', command);
  const info = await stat(dir).catch(() => undefined);
  if (info !== undefined && !info.isDirectory())
    throw new UsageError(`--files ${dir} is not a folder`, command);
  return dir;
}

/** The folder of `LocalFileStore` that holds its idempotency keys. */
const KEYS_FOLDER = '.stepwire-keys';

/**
 * A stored file as an answer: its type, length and entity tag, as bytes no browser runs (`nosniff`
 * and a sandbox CSP, since a stored file may be HTML); no body for `HEAD` or a matching
 * `If-None-Match` (304).
 */
function fileAnswer(
  request: Request,
  file: { contentType: string; size: number; etag?: string },
  body: Uint8Array | ReadableStream<Uint8Array>,
): Response {
  const headers: Record<string, string> = {
    'content-type': file.contentType,
    'content-length': String(file.size),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
  };
  if (file.etag !== undefined) {
    headers['etag'] = file.etag;
    const tags = request.headers.get('if-none-match');
    if (tags !== null && (tags.trim() === '*' || tags.split(',').some((tag) => tag.trim() === file.etag)))
      return new Response(null, { status: 304, headers: { etag: file.etag } });
  }
  if (request.method === 'HEAD') return new Response(null, { headers });
  return new Response(body as Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>, { headers });
}

function missing(rest: string): Response {
  return problemResponse(problem(404, 'not_found', `no file is stored at ${FILES_PATH}${rest}`));
}
