import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll } from 'vitest';
import { GoogleDrive } from '../../src/adapters/google/index.js';
import { describeFileStoreContract } from '../../src/testing/index.js';
import { startFakeDrive, type FakeDrive } from '../fakes/google-drive.js';

let fake: FakeDrive;
let auth: OAuth2Client;

beforeAll(async () => {
  fake = await startFakeDrive();
  auth = new OAuth2Client();
  auth.setCredentials({ access_token: fake.token });
});
afterAll(async () => {
  await fake.close();
});

describeFileStoreContract({
  name: 'GoogleDrive (against the local Drive fake)',
  folder: 'folder-contract',
  create: () => {
    fake.reset();
    fake.addFolder('folder-contract');
    return new GoogleDrive({ auth, rootUrl: fake.url, retry: { attempts: 2, baseMs: 1, capMs: 5 } });
  },
});
