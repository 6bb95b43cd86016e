import { MemoryFileStore, MemorySpreadsheets, MemoryStorage } from '../../src/index.js';
import {
  describeFileStoreContract,
  describeSpreadsheetContract,
  describeStorageContract,
} from '../../src/testing/index.js';

describeSpreadsheetContract({
  name: 'MemorySpreadsheets',
  create: (sheets) => new MemorySpreadsheets({ contract: sheets }),
  capabilities: { write: true, update: true },
});

describeStorageContract({
  name: 'MemoryStorage',
  create: () => new MemoryStorage(),
  capabilities: { listRuns: true },
});

describeFileStoreContract({ name: 'MemoryFileStore', create: () => new MemoryFileStore() });
