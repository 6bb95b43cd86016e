import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
import { CONTRACT_SPREADSHEET, describeSpreadsheetContract } from '../../src/testing/index.js';
import { startFakeSheets, type FakeSheets } from '../fakes/google-sheets.js';

let fake: FakeSheets;
let auth: OAuth2Client;

beforeAll(async () => {
  fake = await startFakeSheets();
  auth = new OAuth2Client();
  auth.setCredentials({ access_token: fake.token });
});
afterAll(async () => {
  await fake.close();
});

describeSpreadsheetContract({
  name: 'GoogleSheets (against the local Sheets fake)',
  create: (sheets) => {
    fake.reset();
    fake.addSpreadsheet(CONTRACT_SPREADSHEET, sheets);
    return new GoogleSheets({ auth, rootUrl: fake.url, retry: { attempts: 2, baseMs: 1, capMs: 5 } });
  },
  capabilities: { write: true, update: true },
});
