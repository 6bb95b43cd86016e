/**
 * Contract suites for adapters: every spreadsheet, storage, file-store and chat adapter runs its
 * suite with one call.
 * Needs vitest.
 * @module
 */
export {
  describeSpreadsheetContract,
  CONTRACT_SPREADSHEET,
  type SpreadsheetContractOptions,
} from './spreadsheet-contract.js';
export { describeStorageContract, type StorageContractOptions } from './storage-contract.js';
export { describeFileStoreContract, type FileStoreContractOptions } from './file-store-contract.js';
export { describeChatContract, type ChatContractOptions, type ChatContractTarget } from './chat-contract.js';
