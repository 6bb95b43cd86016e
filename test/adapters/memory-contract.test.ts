import { MemorySpreadsheets, MemoryStorage } from '../../src/index.js';
import { describeSpreadsheetContract, describeStorageContract } from '../../src/testing/index.js';

describeSpreadsheetContract({
  name: 'MemorySpreadsheets',
  create: (sheets) => new MemorySpreadsheets({ contract: sheets }),
  capabilities: { write: true },
});

describeStorageContract({ name: 'MemoryStorage', create: () => new MemoryStorage() });
