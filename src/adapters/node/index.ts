/**
 * The Node adapters: a local-folder file store, spreadsheets kept as `.xlsx` or `.csv` files, the
 * worker-thread script sandbox and a DNS resolver for request steps. Published through `stepwire/node`.
 * @module
 */
export { LocalFileStore, type LocalFileStoreOptions } from './local-file-store.js';
export { WorkerSandbox, type WorkerSandboxOptions } from './worker-sandbox.js';
export { IsolatedVmSandbox, type IsolatedVmSandboxOptions } from './isolated-vm-sandbox.js';
export { nodeResolver } from './dns-resolver.js';
export { FileSpreadsheets, type FileSpreadsheetsOptions } from './file-spreadsheets.js';
export { parseCsv } from './csv.js';
