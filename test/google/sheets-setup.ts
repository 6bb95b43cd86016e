import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll } from 'vitest';
import { startFakeSheets, type FakeSheets } from '../fakes/google-sheets.js';

/** What a Sheets test file works with: the fake and an OAuth client holding its token. */
export interface SheetsSetup {
  /** The fake Sheets API on loopback; each file resets and fills it as its tests need. */
  readonly fake: FakeSheets;
  /** An OAuth client holding the fake's access token. */
  readonly auth: OAuth2Client;
}

/** Starts a fake Sheets API for the file's tests (closed after them); its fields are set once `beforeAll` ran. */
export function useFakeSheets(): SheetsSetup {
  let fake: FakeSheets | undefined;
  let auth: OAuth2Client | undefined;
  beforeAll(async () => {
    fake = await startFakeSheets();
    auth = new OAuth2Client();
    auth.setCredentials({ access_token: fake.token });
  });
  afterAll(async () => {
    await fake?.close();
  });
  return {
    get fake() {
      return fake!;
    },
    get auth() {
      return auth!;
    },
  };
}
