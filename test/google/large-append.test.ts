import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleSheets } from '../../src/adapters/google/index.js';
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

describe('GoogleSheets.append of many rows', () => {
  it('appends 150,000 rows in one batchUpdate (no stack overflow from spreading rows as arguments)', async () => {
    fake.addSpreadsheet('book', { S: [['id']] });
    const values = Array.from({ length: 150_000 }, (_, i) => [i]);
    await new GoogleSheets({ auth, rootUrl: fake.url }).append({
      spreadsheet_id: 'book',
      sheet_name: 'S',
      row: 1,
      col: 0,
      values,
    });
    const cells = fake.sheet('book', 'S')!.cells;
    expect(cells).toHaveLength(150_001);
    expect(cells[1]).toEqual([0]);
    expect(cells[150_000]).toEqual([149_999]);
    expect(fake.requests.filter((r) => r.path.endsWith(':batchUpdate'))).toHaveLength(1);
  }, 30_000);
});
