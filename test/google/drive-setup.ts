import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { GoogleDrive, type GoogleDriveOptions } from '../../src/adapters/google/index.js';
import { startFakeDrive, type FakeDrive } from '../fakes/google-drive.js';
import type { RecordedRequest } from '../fakes/google-sheets.js';

/** What a Drive test file works with: the fake, the OAuth client holding its token, and stores on it. */
export interface DriveSetup {
  /** The fake Drive on loopback, reset before each test with one folder, `folder-1`. */
  readonly fake: FakeDrive;
  /** An OAuth client holding the fake's access token. */
  readonly auth: OAuth2Client;
  /** A GoogleDrive on the fake with short retry waits; `options` override. */
  store(options?: Partial<GoogleDriveOptions>): GoogleDrive;
}

/**
 * Starts a fake Drive for the file's tests (closed after them), reset before each test with the
 * folder `folder-1`. Its fields are set once the file's `beforeAll` has run.
 */
export function useFakeDrive(): DriveSetup {
  let fake: FakeDrive | undefined;
  let auth: OAuth2Client | undefined;
  beforeAll(async () => {
    fake = await startFakeDrive();
    auth = new OAuth2Client();
    auth.setCredentials({ access_token: fake.token });
  });
  afterAll(async () => {
    await fake?.close();
  });
  beforeEach(() => {
    fake!.reset();
    fake!.addFolder('folder-1');
  });
  return {
    get fake() {
      return fake!;
    },
    get auth() {
      return auth!;
    },
    store: (options = {}) =>
      new GoogleDrive({
        auth: auth!,
        rootUrl: fake!.url,
        retry: { attempts: 3, baseMs: 1, capMs: 10 },
        ...options,
      }),
  };
}

/** Whether a recorded request is a multipart upload. */
export const isUpload = (r: RecordedRequest): boolean =>
  r.method === 'POST' && r.path === '/upload/drive/v3/files';
/** Whether a recorded request is a files.list search. */
export const isSearch = (r: RecordedRequest): boolean => r.method === 'GET' && r.path === '/drive/v3/files';
