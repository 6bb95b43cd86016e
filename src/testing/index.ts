/**
 * Contract suites for adapters: every spreadsheet and storage adapter runs them with one call.
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
