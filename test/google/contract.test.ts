import { GoogleSheets } from '../../src/adapters/google/index.js';
import { CONTRACT_SPREADSHEET, describeSpreadsheetContract } from '../../src/testing/index.js';
import { useFakeSheets } from './sheets-setup.js';

const api = useFakeSheets();

describeSpreadsheetContract({
  name: 'GoogleSheets (against the local Sheets api.fake)',
  create: (sheets) => {
    api.fake.reset();
    api.fake.addSpreadsheet(CONTRACT_SPREADSHEET, sheets);
    return new GoogleSheets({
      auth: api.auth,
      rootUrl: api.fake.url,
      retry: { attempts: 2, baseMs: 1, capMs: 5 },
    });
  },
  capabilities: { write: true, update: true },
});
