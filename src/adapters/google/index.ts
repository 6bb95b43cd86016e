/**
 * `stepwire/google`: Google Sheets as the engine's spreadsheets and Google Drive as a file store.
 * Node only. The googleapis client packages (`@googleapis/sheets`, `@googleapis/drive`) are optional
 * peer dependencies, imported on first use; pass `client` to use one you built.
 * @example
 * ```ts
 * import { GoogleAuth } from 'google-auth-library';
 * import { Engine } from 'stepwire';
 * import { GoogleDrive, GoogleSheets } from 'stepwire/google';
 *
 * const auth = new GoogleAuth({
 *   keyFile: 'service-account.json',
 *   scopes: ['https://www.googleapis.com/auth/spreadsheets', 'https://www.googleapis.com/auth/drive'],
 * });
 * const engine = new Engine({ spreadsheets: new GoogleSheets({ auth }), files: { drive: new GoogleDrive({ auth }) } });
 * ```
 * @module
 */
export { GoogleSheets, type GoogleSheetsOptions } from './sheets.js';
export { GoogleDrive, type GoogleDriveOptions } from './drive.js';
export type {
  SheetsClient,
  DriveClient,
  GoogleCallConfig,
  GoogleAnswer,
  GoogleAuthInput,
} from './clients.js';
export type { RetryOptions } from '../../retry/index.js';
