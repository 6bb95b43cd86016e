import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoogleDrive, GoogleSheets } from '../../src/adapters/google/index.js';
import { startFakeDrive, type FakeDrive } from '../fakes/google-drive.js';
import { startFakeSheets, type FakeSheets } from '../fakes/google-sheets.js';

let sheetsFake: FakeSheets;
let driveFake: FakeDrive;
let auth: OAuth2Client;

beforeAll(async () => {
  // Both served under a path, as behind a proxy: requests outside it answer 404.
  sheetsFake = await startFakeSheets({ prefix: '/proxy/google' });
  driveFake = await startFakeDrive({ prefix: '/proxy/google' });
  auth = new OAuth2Client();
  auth.setCredentials({ access_token: sheetsFake.token });
});
afterAll(async () => {
  await sheetsFake.close();
  await driveFake.close();
});

describe('rootUrl', () => {
  it.each(['not a url', 'ftp://127.0.0.1/', 'http://127.0.0.1:8080/?key=1', 'http://127.0.0.1/#x', '', 42])(
    'refuses %j when the adapter is built, with an error naming rootUrl',
    (rootUrl) => {
      for (const make of [
        () => new GoogleSheets({ auth, rootUrl: rootUrl as string }),
        () => new GoogleDrive({ auth, rootUrl: rootUrl as string }),
      ]) {
        expect(make).toThrow(TypeError);
        expect(make).toThrow(/rootUrl must be an http or https URL/);
      }
    },
  );

  it('keeps the path of a rootUrl for Sheets reads, appends, writes and updates', async () => {
    expect(sheetsFake.url).toMatch(/\/proxy\/google\/$/);
    sheetsFake.addSpreadsheet('book', { S: [['id'], [1]] });
    for (const rootUrl of [sheetsFake.url, sheetsFake.url.replace(/\/$/, '')]) {
      const sheets = new GoogleSheets({ auth, rootUrl, retry: { attempts: 1 } });
      expect(await sheets.read([{ spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 }])).toEqual([
        [['id'], [1]],
      ]);
    }
    const sheets = new GoogleSheets({ auth, rootUrl: sheetsFake.url, retry: { attempts: 1 } });
    await sheets.append({ spreadsheet_id: 'book', sheet_name: 'S', row: 2, col: 0, values: [[2]] });
    await sheets.write({ spreadsheet_id: 'book', sheet_name: 'S', row: 3, col: 0, values: [[3]] });
    await sheets.update({
      spreadsheet_id: 'book',
      sheet_name: 'S',
      cells: [{ row: 1, col: 1, values: ['x'] }],
      deleteRows: [],
      expect: [{ row: 1, col: 0, values: [1] }],
    });
    expect(sheetsFake.sheet('book', 'S')!.cells).toEqual([['id'], [1, 'x'], [2], [3]]);
  });

  it('keeps the path of a rootUrl for Drive uploads, searches and downloads', async () => {
    driveFake.addFolder('folder-1');
    const drive = new GoogleDrive({ auth, rootUrl: driveFake.url, retry: { attempts: 1 } });
    const file = { name: 'a.txt', folder: 'folder-1', contentType: 'text/plain', data: new Uint8Array([65]) };
    const stored = await drive.put(file, { idempotencyKey: 'k' });
    expect((await drive.put(file, { idempotencyKey: 'k' })).url).toBe(stored.url);
    expect(await drive.get(stored.url)).toEqual({ data: new Uint8Array([65]), contentType: 'text/plain' });
    expect(driveFake.files.size).toBe(1);
  });
});
