/**
 * The invoices example on Google Sheets and Google Drive instead of the in-memory adapters.
 * It is not run by the tests (it needs a Google account); it typechecks with the repository.
 * In your own project, import from 'stepwire/node' and 'stepwire/google' instead of ../../src.
 *
 *   GOOGLE_APPLICATION_CREDENTIALS=service-account.json SPREADSHEET_ID=1AbC... DRIVE_FOLDER_ID=1XyZ... \
 *     npx tsx examples/invoices/google.ts
 *
 * The spreadsheet needs sheets named "customers" and "orders" with the header rows of the CSV
 * files in sheets/shop/, and "open_invoices" with the header row customer_id,name,open_orders,
 * shared with the service account's e-mail address, as is the Drive folder.
 */
import { fileURLToPath } from 'node:url';
import { GoogleAuth } from 'google-auth-library';
import { GoogleDrive, GoogleSheets } from '../../src/adapters/google/index.js';
import { loadProject } from '../../src/node/project.js';

const spreadsheetId = process.env['SPREADSHEET_ID'] ?? 'set SPREADSHEET_ID';
const folderId = process.env['DRIVE_FOLDER_ID'] ?? 'set DRIVE_FOLDER_ID';
const auth = new GoogleAuth({
  scopes: ['https://www.googleapis.com/auth/spreadsheets', 'https://www.googleapis.com/auth/drive'],
});

// 1. The same folder, with Google adapters: sheets/ is not loaded, `drive` is a file store beside `memory`.
const { engine } = await loadProject(fileURLToPath(new URL('.', import.meta.url)), {
  engineOptions: { spreadsheets: new GoogleSheets({ auth }), files: { drive: new GoogleDrive({ auth }) } },
});

// 2. Point the entities at the real spreadsheet (or write its id into entities/*.json).
for (const entity of await engine.catalog.listEntities()) {
  await engine.catalog.upsertEntity({
    ...entity,
    spreadsheet_config: { ...entity.spreadsheet_config, spreadsheet_id: spreadsheetId },
  });
}

// 3. Upload to Drive: the provider name of the upload step, and the folder (or edit workflows/invoice.json).
const invoice = await engine.workflows.get('invoice');
await engine.workflows.replace({
  ...invoice,
  steps: invoice.steps.map((step) =>
    step.name === 'upload' && step.type === 'l2'
      ? {
          ...step,
          l2_data: {
            ...step.l2_data,
            provider: 'drive',
            input_data: { ...step.l2_data.input_data, folder_id: folderId },
          },
        }
      : step,
  ),
});

const run = await engine.run('invoice', { customer_id: 1 });
console.log(run.status, run.output ?? run.error);
