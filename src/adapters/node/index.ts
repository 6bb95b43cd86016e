/**
 * Node-only parts of stepwire: a local-folder file store, spreadsheets kept as `.xlsx` or `.csv`
 * files, the worker-thread script sandbox, a DNS resolver for request steps, and a small HTTP server
 * for the fetch handler.
 * @module
 */
export { LocalFileStore, type LocalFileStoreOptions } from './local-file-store.js';
export { WorkerSandbox, type WorkerSandboxOptions } from './worker-sandbox.js';
export { nodeResolver } from './dns-resolver.js';
export { serve, type ServeOptions, type RunningServer } from './serve.js';
export { FileSpreadsheets, type FileSpreadsheetsOptions } from './file-spreadsheets.js';
export { parseCsv } from './csv.js';
export { loadProject, type LoadProjectOptions, type LoadedProject } from './project.js';
