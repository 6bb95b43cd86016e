/**
 * The process the kill -9 test kills: opens the embedded database directory given as its argument
 * (waiting while another process holds it), prints `have <ids>` (the run ids found there, as JSON),
 * then `ready`, then runs a tiny workflow on in-memory spreadsheets in a loop, printing `done <id>`
 * once each run's final record is written. stdout is a pipe, which Node writes synchronously: a
 * printed id was written before the line left.
 */
import { isStorageError, openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine, MemorySpreadsheets, type Workflow } from '../../src/index.js';
import { customersEntity, shopSheets } from '../fixtures.js';

const LOOKUP: Workflow = {
  name: 'lookup',
  steps: [
    {
      name: 'read',
      type: 'l2',
      l2_data: {
        provider: 'catalog',
        module: 'action',
        action: 'get_entity',
        input_data: {
          entity_name: 'customers',
          operation: {
            filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: '{{input.id}}' }],
          },
        },
      },
    },
    {
      name: 'echo',
      type: 'l2',
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { rows: '{{read}}' },
      },
    },
  ],
  wires: [],
};

/** Opens the directory as soon as its holder is gone: the test starts the next child before it kills this one. */
async function openWhenFree(dir: string): Promise<PostgresDatabase> {
  for (;;) {
    try {
      return await openPostgres(dir);
    } catch (error) {
      if (!isStorageError(error) || error.code !== 'locked') throw error;
      await new Promise((done) => setTimeout(done, 10));
    }
  }
}

const db = await openWhenFree(process.argv[2]!);
const ids = (await db.storage.list('runs')).map((entry) => entry.key);
process.stdout.write(`have ${JSON.stringify(ids)}\n`);
const engine = new Engine({ storage: db.storage, spreadsheets: new MemorySpreadsheets(shopSheets()) });
await engine.catalog.upsertEntity(customersEntity);
await engine.workflows.replace(LOOKUP);
process.stdout.write('ready\n');
// A child whose test died (a timeout kills vitest, not its children) stops instead of looping on.
const parent = process.ppid;
process.stdout.on('error', () => process.exit(0));
for (let n = 0; process.ppid === parent; n++) {
  const record = await engine.run('lookup', { id: 1 + (n % 3) });
  if (record.status !== 'succeeded') throw new Error(`run ${record.id} ${record.status}`);
  process.stdout.write(`done ${record.id}\n`);
}
process.exit(0);
