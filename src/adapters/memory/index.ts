export { MemorySpreadsheets, type SpreadsheetSeed } from './spreadsheets.js';
export { MemoryStorage } from './storage.js';
export { MemoryFileStore, type MemoryFileStoreOptions, type MemoryFile } from './file-store.js';
export { MemoryChat } from './chat.js';
export { MemoryMail, type MemoryMailMessage } from './mail.js';
