/**
 * The parts of the googleapis clients the adapters call, typed structurally so `stepwire/google`'s
 * types do not depend on the client packages (any version from `@googleapis/sheets` 12 and
 * `@googleapis/drive` 19 fits).
 * @module
 */
import { importOptional, namedExport } from '../import-optional.js';
import { httpUrlOption } from '../http-url.js';

/** Per-call options handed to a googleapis method (gaxios options). */
export interface GoogleCallConfig {
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Longest wait for the answer, in ms. */
  timeout?: number;
  /** Always `false`: the adapter does its own retries. */
  retry?: boolean;
  /** Root of the API; the Drive client needs it again per call for media uploads. */
  rootUrl?: string;
  /** How gaxios returns the body (`arraybuffer` for downloads). */
  responseType?: 'arraybuffer' | 'json' | 'text';
}

/** An answer of a googleapis method. */
export interface GoogleAnswer {
  /** The parsed body. */
  data: unknown;
}

/** The Sheets v4 methods `GoogleSheets` uses (a `sheets_v4.Sheets` from `@googleapis/sheets`). */
export interface SheetsClient {
  /** `spreadsheets.*` */
  spreadsheets: {
    /** `spreadsheets.get`: sheet titles, ids and grid sizes. */
    get(params: { spreadsheetId: string; fields?: string }, options: GoogleCallConfig): Promise<GoogleAnswer>;
    /** `spreadsheets.batchUpdate`: structural and cell changes, applied all or none. */
    batchUpdate(
      params: { spreadsheetId: string; requestBody: object },
      options: GoogleCallConfig,
    ): Promise<GoogleAnswer>;
    /** `spreadsheets.values.*` */
    values: {
      /** `spreadsheets.values.get`: one range. */
      get(
        params: {
          spreadsheetId: string;
          range: string;
          valueRenderOption?: string;
          dateTimeRenderOption?: string;
          majorDimension?: string;
        },
        options: GoogleCallConfig,
      ): Promise<GoogleAnswer>;
      /** `spreadsheets.values.batchGet`: several ranges in one request. */
      batchGet(
        params: {
          spreadsheetId: string;
          ranges: string[];
          valueRenderOption?: string;
          dateTimeRenderOption?: string;
          majorDimension?: string;
        },
        options: GoogleCallConfig,
      ): Promise<GoogleAnswer>;
      /** `spreadsheets.values.update`: overwrites a range. */
      update(
        params: { spreadsheetId: string; range: string; valueInputOption: string; requestBody: object },
        options: GoogleCallConfig,
      ): Promise<GoogleAnswer>;
    };
  };
}

/** The Drive v3 methods `GoogleDrive` uses (a `drive_v3.Drive` from `@googleapis/drive`). */
export interface DriveClient {
  /** `files.*` */
  files: {
    /** `files.create`: a multipart upload. */
    create(
      params: {
        requestBody: {
          name: string;
          parents?: string[];
          mimeType?: string;
          appProperties?: Record<string, string>;
        };
        media: { mimeType: string; body: unknown };
        fields?: string;
        supportsAllDrives?: boolean;
      },
      options: GoogleCallConfig,
    ): Promise<GoogleAnswer>;
    /** `files.get`: metadata, or the bytes with `alt: 'media'`. */
    get(
      params: { fileId: string; alt?: string; fields?: string; supportsAllDrives?: boolean },
      options: GoogleCallConfig,
    ): Promise<GoogleAnswer>;
    /** `files.list`: files matching a search query `q`. */
    list(
      params: {
        q: string;
        fields?: string;
        pageSize?: number;
        /** `nextPageToken` of the page before. */
        pageToken?: string;
        corpora?: string;
        supportsAllDrives?: boolean;
        includeItemsFromAllDrives?: boolean;
      },
      options: GoogleCallConfig,
    ): Promise<GoogleAnswer>;
  };
}

/**
 * Credentials the googleapis clients accept: a google-auth-library client (`GoogleAuth`, `JWT`,
 * `OAuth2Client`, …) or an API key string (read-only, public data).
 */
export type GoogleAuthInput = string | object;

/**
 * Checks an adapter's `rootUrl` when it is built: an `http:` or `https:` URL without query or
 * fragment. Returns it normalized (`http://host:8080` gets its `/`); a path is kept, so
 * `https://proxy.example/google/` sends `https://proxy.example/google/v4/…`. @internal
 */
export function checkRootUrl(adapter: string, rootUrl: unknown): string | undefined {
  return rootUrl === undefined ? undefined : httpUrlOption(`${adapter}: rootUrl`, rootUrl, { plain: true });
}

/**
 * Builds a googleapis client from its optional package, loaded on first use: `retry` is off because
 * stepwire's own retry policy runs around every call. @internal
 */
export async function googleClient<T>(
  name: '@googleapis/sheets' | '@googleapis/drive',
  exportName: 'sheets' | 'drive',
  version: 'v4' | 'v3',
  adapter: { auth?: GoogleAuthInput | undefined; rootUrl?: string | undefined },
): Promise<T> {
  const user = exportName === 'sheets' ? 'GoogleSheets (stepwire/google)' : 'GoogleDrive (stepwire/google)';
  const module = await importOptional(
    name,
    user,
    () => (exportName === 'sheets' ? import('@googleapis/sheets') : import('@googleapis/drive')),
    'pass an already-built client as options.client',
  );
  const factory = namedExport<(options: object) => T>(module, exportName);
  const options: Record<string, unknown> = { version, retry: false };
  if (adapter.auth !== undefined) options.auth = adapter.auth;
  if (adapter.rootUrl !== undefined) options.rootUrl = adapter.rootUrl;
  return factory(options);
}
