/**
 * A local fake of the Google Drive API v3 on 127.0.0.1: multipart uploads at
 * `/upload/drive/v3/files?uploadType=multipart` (with `appProperties`), metadata and `alt=media`
 * downloads, and `files.list` searches of the form
 * `appProperties has { key='k' and value='v' }`, with Google's error shapes, request recording and
 * faults (see {@link startFakeHttp}).
 */
import {
  checkAuth,
  FakeHttpError,
  startFakeHttp,
  type FakeHttp,
  type FakeHttpOptions,
  type RecordedRequest,
} from './google-sheets.js';

/** A file the fake holds. */
export interface FakeDriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  /** Private properties of the app that created it. */
  appProperties: Record<string, string>;
  data: Buffer;
}

/** One part of a multipart/related body. */
export interface MultipartPart {
  headers: Record<string, string>;
  body: Buffer;
}

/** The fake Drive API. */
export interface FakeDrive extends FakeHttp {
  token: string;
  files: Map<string, FakeDriveFile>;
  /** Adds a folder uploads may go into. */
  addFolder(id: string): void;
  /** Makes uploads into a folder answer 403. */
  deny(folderId: string): void;
  reset(): void;
}

/** Splits a multipart/related body into its parts, byte for byte. */
export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'Missing multipart boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'Unterminated multipart body');
    let part = body.subarray(start, next);
    if (part.subarray(0, 2).toString() === '\r\n') part = part.subarray(2);
    if (part.subarray(part.length - 2).toString() === '\r\n') part = part.subarray(0, part.length - 2);
    const split = part.indexOf('\r\n\r\n');
    const headers: Record<string, string> = {};
    for (const line of part.subarray(0, split).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    parts.push({ headers, body: part.subarray(split + 4) });
    at = next;
  }
  return parts;
}

/** A quoted string of a query, `'…'` with `\'` and `\\` escapes. */
const QUOTED = String.raw`'((?:[^'\\]|\\.)*)'`;
/** The one search the fake understands, as Drive v3 documents it. */
const APP_PROPERTY_QUERY = new RegExp(
  String.raw`^\s*appProperties\s+has\s*\{\s*key\s*=\s*${QUOTED}\s+and\s+value\s*=\s*${QUOTED}\s*\}\s*$`,
);

/** `{ key, value }` of an `appProperties has { … }` query, or a 400 as Drive answers a bad `q`. */
export function parseAppPropertyQuery(q: string): { key: string; value: string } {
  const match = APP_PROPERTY_QUERY.exec(q);
  if (!match) throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'Invalid Value', ['invalid']);
  const unquote = (text: string): string => text.replace(/\\(.)/g, '$1');
  return { key: unquote(match[1]!), value: unquote(match[2]!) };
}

/** Keeps the fields a `fields` mask names: `a,b` or `files(a,b)` inside a list. */
function fieldsOf(mask: string | undefined, list: boolean): string[] | undefined {
  if (mask === undefined) return undefined;
  if (!list) return mask.split(',').map((f) => f.trim());
  const inner = /files\(([^)]*)\)/.exec(mask)?.[1];
  return inner === undefined ? undefined : inner.split(',').map((f) => f.trim());
}

/** Starts the fake Drive API (under `options.prefix` when given). */
export async function startFakeDrive(options: FakeHttpOptions = {}): Promise<FakeDrive> {
  const token = 'test-token';
  const files = new Map<string, FakeDriveFile>();
  const folders = new Set<string>();
  const denied = new Set<string>();
  let next = 1;

  const pick = (file: FakeDriveFile, wanted: string[] | undefined): Record<string, unknown> => {
    const all: Record<string, unknown> = {
      kind: 'drive#file',
      id: file.id,
      name: file.name,
      mimeType: file.mimeType,
      parents: file.parents,
      size: String(file.data.length),
      appProperties: file.appProperties,
      webViewLink: `https://drive.google.com/file/d/${file.id}/view?usp=drivesdk`,
    };
    const keep = wanted ?? ['kind', 'id', 'name', 'mimeType'];
    return Object.fromEntries(keep.filter((f) => f in all).map((f) => [f, all[f]]));
  };

  const notFound = (id: string): FakeHttpError =>
    new FakeHttpError(404, 'NOT_FOUND', `File not found: ${id}.`, ['notFound']);

  const http = await startFakeHttp((request: RecordedRequest) => {
    checkAuth(request, token, 'unused-key');
    if (request.method === 'POST' && request.path === '/upload/drive/v3/files') {
      if (request.query.uploadType?.[0] !== 'multipart')
        throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'Expected uploadType=multipart');
      const [metaPart, mediaPart, extra] = parseMultipart(
        request.body,
        String(request.headers['content-type'] ?? ''),
      );
      if (!metaPart || !mediaPart || extra)
        throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'Expected two parts: metadata and media');
      const meta = JSON.parse(metaPart.body.toString('utf8')) as {
        name?: string;
        parents?: string[];
        mimeType?: string;
        appProperties?: Record<string, string>;
      };
      const parents = meta.parents ?? [];
      for (const parent of parents) {
        if (!folders.has(parent)) throw notFound(parent);
        if (denied.has(parent)) {
          throw new FakeHttpError(
            403,
            'PERMISSION_DENIED',
            'The user does not have sufficient permissions for this file.',
            ['insufficientFilePermissions'],
          );
        }
      }
      const file: FakeDriveFile = {
        id: `file${next++}`,
        name: meta.name ?? 'Untitled',
        mimeType: meta.mimeType ?? mediaPart.headers['content-type'] ?? 'application/octet-stream',
        parents,
        appProperties: { ...meta.appProperties },
        data: Buffer.from(mediaPart.body),
      };
      files.set(file.id, file);
      return pick(file, fieldsOf(request.query.fields?.[0], false));
    }
    if (request.method === 'GET' && request.path === '/drive/v3/files') {
      const q = request.query.q?.[0];
      if (q === undefined) throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'The fake needs a q');
      const { key, value } = parseAppPropertyQuery(q);
      const pageSize = Number(request.query.pageSize?.[0] ?? 100);
      // Page tokens are opaque to clients; the fake's is the index of the next matching file.
      const token = request.query.pageToken?.[0];
      const from = token === undefined ? 0 : Number(/^offset:(\d+)$/.exec(token)?.[1] ?? NaN);
      if (!Number.isSafeInteger(from))
        throw new FakeHttpError(400, 'INVALID_ARGUMENT', 'Invalid Value', ['invalid']);
      const matching = [...files.values()].filter((f) => f.appProperties[key] === value);
      const found = matching.slice(from, from + pageSize);
      const nextPageToken = from + pageSize < matching.length ? `offset:${from + pageSize}` : undefined;
      const mask = request.query.fields?.[0];
      const listed = found.map((f) => pick(f, fieldsOf(mask, true)));
      const all: Record<string, unknown> = {
        kind: 'drive#fileList',
        ...(nextPageToken === undefined ? {} : { nextPageToken }),
        incompleteSearch: false,
        files: listed,
      };
      if (mask === undefined) return all;
      // A fields mask keeps only what it names, as Drive does; `files(…)` names the list.
      const named = mask
        .replace(/\([^)]*\)/g, '')
        .split(',')
        .map((f) => f.trim());
      return Object.fromEntries(Object.entries(all).filter(([field]) => named.includes(field)));
    }
    const get = /^\/drive\/v3\/files\/([^/]+)$/.exec(request.path);
    if (request.method === 'GET' && get) {
      const file = files.get(get[1]!);
      if (!file) throw notFound(get[1]!);
      if (request.query.alt?.[0] === 'media') return { raw: file.data, contentType: file.mimeType };
      return pick(file, fieldsOf(request.query.fields?.[0], false));
    }
    throw new FakeHttpError(404, 'NOT_FOUND', `No route for ${request.method} ${request.path}`);
  }, options);

  return {
    ...http,
    token,
    files,
    addFolder: (id) => void folders.add(id),
    deny: (id) => void denied.add(id),
    reset() {
      http.requests.length = 0;
      http.faults.length = 0;
      files.clear();
      next = 1;
      folders.clear();
      denied.clear();
    },
  };
}
