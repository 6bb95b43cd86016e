/**
 * The Google Drive file store (Drive API v3 through `@googleapis/drive`).
 * @module
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { UpstreamError } from '../../errors/index.js';
import { normalizeRetry, withRetry, type RetryOptions, type RetryPolicy } from '../../retry/index.js';
import type { CallOptions, FileInput, FileStore, StoredFile } from '../types.js';
import type { DriveClient, GoogleAnswer, GoogleAuthInput, GoogleCallConfig } from './clients.js';
import { classifySafe, describeFailure, readGoogleError } from './errors.js';
import { checkRootUrl, googleClient } from './clients.js';
import { RecentResults } from '../recent-results.js';

/** The `appProperties` key under which a created file keeps the put's idempotency key. */
const DRIVE_KEY_PROPERTY = 'stepwire_key';
/** Drive allows 124 bytes (UTF-8) per property, key and value together. */
const PROPERTY_BYTES = 124;
/** Most `files.list` pages one search for an idempotency key reads. */
const SEARCH_PAGES = 10;

/** Options of {@link GoogleDrive}. */
export interface GoogleDriveOptions {
  /** Credentials: a google-auth-library client (`GoogleAuth`, `JWT`, `OAuth2Client`, …). Not needed when `client` is given. */
  auth?: GoogleAuthInput;
  /**
   * Root of the Drive API, e.g. a local fake: `http://127.0.0.1:8080/`; also used for media uploads.
   * An `http` or `https` URL without query or fragment (else the constructor throws a `TypeError`);
   * a path is kept (`https://proxy.example/google/` calls `https://proxy.example/google/drive/v3/…`).
   */
  rootUrl?: string;
  /** An already-built `drive_v3.Drive` client; then `@googleapis/drive` is not imported. */
  client?: DriveClient;
  /** Folder id used when a file names no `folder`. */
  folderId?: string;
  /** Retries of 429, rate-limit 403s, 5xx and network failures, with exponential backoff and full jitter. */
  retry?: RetryOptions;
  /**
   * Longest wait for one answer, in ms.
   * @default 120000
   */
  timeoutMs?: number;
}

/**
 * Google Drive as a file store for `upload_file`: each file is created in the folder `folder`
 * names (a Drive folder id, also on shared drives) and its `webViewLink` is the `file_url`.
 *
 * A put with an `idempotencyKey` stores the key in the file's `appProperties` (`stepwire_key`) and,
 * before every upload attempt, searches Drive for a file with that key and returns it instead of
 * uploading again: a step delivered again, in any process, finds the first file. Drive's search may
 * show a new file a moment late, so two deliveries of one step within that moment can still both
 * upload.
 * @example
 * ```ts
 * const auth = new GoogleAuth({ keyFile: 'service-account.json', scopes: ['https://www.googleapis.com/auth/drive'] });
 * const engine = new Engine({ files: { drive: new GoogleDrive({ auth }) } });
 * ```
 */
export class GoogleDrive implements FileStore {
  readonly #options: GoogleDriveOptions;
  readonly #policy: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #recent = new RecentResults<StoredFile>();
  #client: Promise<DriveClient> | undefined;

  constructor(options: GoogleDriveOptions = {}) {
    const rootUrl = checkRootUrl('GoogleDrive', options.rootUrl);
    this.#options = rootUrl === undefined ? options : { ...options, rootUrl };
    this.#policy = normalizeRetry(options.retry);
    this.#timeoutMs = options.timeoutMs ?? 120_000;
    if (options.client) this.#client = Promise.resolve(options.client);
  }

  /**
   * Uploads the file (multipart) into its folder and returns its `webViewLink` as `url`. A 5xx or a
   * lost answer is retried like Drive's guide advises; without an `idempotencyKey` that can in rare
   * cases leave a duplicate file. With a key already used (the file found by its `stepwire_key`),
   * uploads nothing and returns the first file's url.
   */
  put(file: FileInput, options: CallOptions = {}): Promise<StoredFile> {
    const key = options.idempotencyKey;
    return this.#recent.run(key, () => this.#upload(file, key, options.signal));
  }

  async #upload(
    file: FileInput,
    key: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<StoredFile> {
    const folder = file.folder ?? this.#options.folderId;
    const requestBody: {
      name: string;
      parents?: string[];
      mimeType: string;
      appProperties?: Record<string, string>;
    } = { name: file.name, mimeType: file.contentType };
    if (folder) requestBody.parents = [folder];
    const mark = key === undefined ? undefined : propertyValue(key);
    if (mark !== undefined) requestBody.appProperties = { [DRIVE_KEY_PROPERTY]: mark };
    const bytes = file.data;
    const where = `"${file.name}"${folder ? ` into Drive folder "${folder}"` : ''}`;
    const answer = await this.#call(`upload of ${where}`, folder, signal, async (client, config) => {
      // Looked up on every attempt, so a retry after a lost answer finds the file the lost one made.
      if (mark !== undefined) {
        const found = await findByKey(client, config, mark);
        if (found !== undefined) return { data: found };
      }
      return client.files.create(
        {
          requestBody,
          // A fresh stream each attempt; one chunk, since Readable.from would iterate a Uint8Array byte by byte.
          media: {
            mimeType: file.contentType,
            body: Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]),
          },
          fields: 'id,webViewLink',
          supportsAllDrives: true,
        },
        config,
      );
    });
    const data = (answer.data ?? {}) as { id?: string; webViewLink?: string };
    if (typeof data.webViewLink === 'string') return { url: data.webViewLink };
    if (typeof data.id === 'string')
      return { url: `https://drive.google.com/file/d/${encodeURIComponent(data.id)}/view` };
    throw new UpstreamError(`Drive answered the upload of ${where} without a file id or link`, undefined, {
      retryable: false,
    });
  }

  /** Downloads a file by its Drive link (`…/file/d/<id>/…` or `…?id=<id>`); `undefined` when it does not exist. */
  async get(
    url: string,
    options: CallOptions = {},
  ): Promise<{ data: Uint8Array; contentType: string } | undefined> {
    const fileId = fileIdOf(url);
    if (fileId === undefined) return undefined;
    try {
      const meta = await this.#call(
        `lookup of file "${fileId}"`,
        undefined,
        options.signal,
        (client, config) =>
          client.files.get({ fileId, fields: 'id,mimeType', supportsAllDrives: true }, config),
      );
      const media = await this.#call(
        `download of file "${fileId}"`,
        undefined,
        options.signal,
        (client, config) =>
          client.files.get(
            { fileId, alt: 'media', supportsAllDrives: true },
            { ...config, responseType: 'arraybuffer' },
          ),
      );
      const contentType =
        (meta.data as { mimeType?: string } | undefined)?.mimeType ?? 'application/octet-stream';
      return { data: toBytes(media.data), contentType };
    } catch (error) {
      if (error instanceof UpstreamError && error.status === 404) return undefined;
      throw error;
    }
  }

  async #call(
    what: string,
    folder: string | undefined,
    signal: AbortSignal | undefined,
    run: (client: DriveClient, config: GoogleCallConfig) => Promise<GoogleAnswer>,
  ): Promise<GoogleAnswer> {
    const client = await this.#getClient();
    const config: GoogleCallConfig = { retry: false, timeout: this.#timeoutMs };
    if (signal) config.signal = signal;
    if (this.#options.rootUrl !== undefined) config.rootUrl = this.#options.rootUrl;
    try {
      return await withRetry(() => run(client, config), {
        policy: this.#policy,
        signal,
        classify: (error) => classifySafe(readGoogleError(error)),
      });
    } catch (error) {
      if ((error as Error)?.name === 'CancelledError') throw error;
      throw driveError(error, what, folder);
    }
  }

  #getClient(): Promise<DriveClient> {
    this.#client ??= googleClient<DriveClient>('@googleapis/drive', 'drive', 'v3', this.#options);
    this.#client.catch(() => (this.#client = undefined));
    return this.#client;
  }
}

/**
 * The first file whose `stepwire_key` is `mark`, following `nextPageToken` for up to
 * {@link SEARCH_PAGES} pages: Drive may answer partial or empty pages before the end of the list.
 * `undefined` when the search ends without one (also when Drive says `incompleteSearch`, or the
 * pages run out: the upload then goes ahead, as without a key).
 */
async function findByKey(client: DriveClient, config: GoogleCallConfig, mark: string): Promise<unknown> {
  let pageToken: string | undefined;
  for (let page = 0; page < SEARCH_PAGES; page++) {
    const params: Parameters<DriveClient['files']['list']>[0] = {
      q: `appProperties has { key='${DRIVE_KEY_PROPERTY}' and value='${quoted(mark)}' }`,
      fields: 'nextPageToken,incompleteSearch,files(id,webViewLink)',
      pageSize: 10,
      corpora: 'allDrives',
      includeItemsFromAllDrives: true,
      supportsAllDrives: true,
    };
    if (pageToken !== undefined) params.pageToken = pageToken;
    const answer = await client.files.list(params, config);
    const data = (answer.data ?? {}) as { files?: unknown; nextPageToken?: unknown };
    const first = Array.isArray(data.files) ? data.files.find(isDriveFile) : undefined;
    if (first !== undefined) return first;
    if (typeof data.nextPageToken !== 'string' || data.nextPageToken === '') return undefined;
    pageToken = data.nextPageToken;
  }
  return undefined;
}

function isDriveFile(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (typeof (value as { id?: unknown }).id === 'string' ||
      typeof (value as { webViewLink?: unknown }).webViewLink === 'string')
  );
}

function driveError(error: unknown, what: string, folder: string | undefined): UpstreamError {
  const failure = readGoogleError(error);
  const said = describeFailure(failure);
  const { status } = failure;
  const retryable = classifySafe(failure).retry && status !== 401;
  let message = `Google Drive ${what} failed: ${said}`;
  if (failure.credentials) {
    message = `Google Drive ${what} failed: could not use the credentials (options.auth): ${said}`;
  } else if (status === 404 && folder) {
    message = `Google Drive ${what} failed: folder "${folder}" was not found, or is not shared with the service account's email (${said})`;
  } else if (status === 403 && !failure.rateLimited) {
    message =
      `Google Drive ${what} failed: no permission. Share the folder with the service account's email (client_email in its key JSON) ` +
      `as Editor (Content manager on a shared drive); service accounts have no storage quota of their own, so use a shared drive folder (${said})`;
  }
  return new UpstreamError(message, status, { cause: error, retryable });
}

/** The file id in a Drive link: `https://drive.google.com/file/d/<id>/view`, `…/open?id=<id>`, or a bare id. */
function fileIdOf(url: string): string | undefined {
  const path = /\/(?:file\/)?d\/([\w-]+)/.exec(url);
  if (path) return path[1];
  try {
    const id = new URL(url).searchParams.get('id');
    if (id) return id;
  } catch {
    if (/^[\w-]+$/.test(url)) return url;
  }
  return undefined;
}

/**
 * The `stepwire_key` value of an idempotency key: the key itself when it fits Drive's 124 bytes per
 * property, otherwise `sha256:` and its hex digest.
 */
function propertyValue(key: string): string {
  const room = PROPERTY_BYTES - new TextEncoder().encode(DRIVE_KEY_PROPERTY).length;
  if (new TextEncoder().encode(key).length <= room) return key;
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** A value inside single quotes of a Drive search query: `\` and `'` escaped with a backslash. */
function quoted(value: string): string {
  return value.replace(/[\\']/g, (c) => `\\${c}`);
}

function toBytes(data: unknown): Uint8Array {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  if (typeof data === 'string') return new TextEncoder().encode(data);
  return new Uint8Array();
}
