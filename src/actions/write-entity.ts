import { WriteEntityInputSchema } from '../schema/index.js';
import type { ActionDefinition } from './registry.js';

/**
 * `catalog/action/write_entity`: writes rows to one entity in a write mode (`append` by default;
 * `upsert`, `update` and `delete` by primary key; `replace`), all or nothing. `rows` are objects,
 * arrays in column order or a data table; for `delete`, objects of the key columns. Output
 * `{ written }`, the number of rows written (or deleted). The write carries the step's idempotency
 * key, so an append delivered again counts rows the sheet already holds with the same key and
 * values as written instead of rejecting them as duplicate keys.
 */
export const writeEntityAction: ActionDefinition<typeof WriteEntityInputSchema> = {
  provider: 'catalog',
  module: 'action',
  action: 'write_entity',
  description: 'Writes rows to an entity: append, upsert, update or delete by key, or replace.',
  input: WriteEntityInputSchema,
  async run(input, context) {
    const result = await context.catalog.write(
      [{ entity: input.entity_name, rows: input.rows, mode: input.write_mode ?? 'append' }],
      { signal: context.signal, idempotencyKey: context.idempotencyKey },
    );
    return { written: result.written[input.entity_name] ?? 0 };
  },
};
