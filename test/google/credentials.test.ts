import { GoogleAuth, OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GoogleDrive, GoogleSheets } from '../../src/adapters/google/index.js';
import type { RangeRequest } from '../../src/adapters/types.js';
import { UpstreamError } from '../../src/errors/index.js';
import { startFakeDrive, type FakeDrive } from '../fakes/google-drive.js';
import { startFakeSheets, type FakeSheets, type RecordedRequest } from '../fakes/google-sheets.js';

let fake: FakeSheets;
let drive: FakeDrive;

beforeAll(async () => {
  fake = await startFakeSheets();
  drive = await startFakeDrive();
});
afterAll(async () => {
  await fake.close();
  await drive.close();
});
beforeEach(() => {
  fake.reset();
  drive.reset();
  fake.addSpreadsheet('book', { S: [['id'], [1]] });
});

const retry = { attempts: 3, baseMs: 1, capMs: 10 };
const S: RangeRequest = { spreadsheet_id: 'book', sheet_name: 'S', row: 0, col: 0 };
const isToken = (r: RecordedRequest): boolean => r.path === '/token';

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

/** An OAuth client whose access token has expired, refreshing at the fake's `/token`. */
function expiredClient(refreshToken?: string): OAuth2Client {
  const client = new OAuth2Client({
    clientId: 'id',
    clientSecret: 'secret',
    endpoints: { oauth2TokenUrl: `${fake.url}token` },
  });
  client.setCredentials({
    access_token: 'old',
    expiry_date: Date.now() - 1000,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
  });
  return client;
}

function expectCredentialsError(error: any): void {
  expect(error).toBeInstanceOf(UpstreamError);
  expect(error.code).toBe('upstream_error');
  expect(error.retryable).toBe(false);
  expect(error.message).toContain('could not use the credentials');
  expect(error.message).not.toContain('no answer');
}

describe('credentials that cannot be used', () => {
  const setups: [string, () => object][] = [
    [
      'a missing key file',
      () => new GoogleAuth({ keyFile: '/nonexistent/stepwire-key.json', scopes: ['x'] }),
    ],
    [
      'a bad private key',
      () =>
        new GoogleAuth({ credentials: { client_email: 'a@b.c', private_key: 'not a key' }, scopes: ['x'] }),
    ],
    ['an expired token without refresh token', () => expiredClient()],
  ];
  it.each(setups)('fail a Sheets read and append once, not retryable, given %s', async (_, auth) => {
    const sheets = new GoogleSheets({ auth: auth(), rootUrl: fake.url, retry });
    expectCredentialsError(await rejection(sheets.read([S])));
    expectCredentialsError(await rejection(sheets.append({ ...S, row: 1, values: [[2]] })));
    expect(fake.requests).toHaveLength(0);
  });

  it('fail a Drive upload once, not retryable, given a missing key file', async () => {
    drive.addFolder('folder-1');
    const auth = new GoogleAuth({ keyFile: '/nonexistent/stepwire-key.json', scopes: ['x'] });
    const store = new GoogleDrive({ auth, rootUrl: drive.url, retry });
    const error = await rejection(
      store.put({
        name: 'a.pdf',
        folder: 'folder-1',
        contentType: 'application/pdf',
        data: new Uint8Array([1]),
      }),
    );
    expectCredentialsError(error);
    expect(drive.requests).toHaveLength(0);
  });

  it('report a refused token refresh (invalid_grant) as a credentials error, asked once', async () => {
    fake.faults.push({
      match: isToken,
      status: 400,
      body: JSON.stringify({
        error: 'invalid_grant',
        error_description: 'Token has been expired or revoked.',
      }),
    });
    const sheets = new GoogleSheets({ auth: expiredClient('refresh'), rootUrl: fake.url, retry });
    const error = await rejection(sheets.read([S]));
    expectCredentialsError(error);
    expect(error.message).toContain('invalid_grant: Token has been expired or revoked.');
    expect(error.code).not.toBe('sheet_error');
    expect(fake.requests.map((r) => r.path)).toEqual(['/token']);
  });
});
