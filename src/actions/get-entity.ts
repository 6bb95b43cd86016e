import { z } from 'zod';
import type { GetEntityInput } from '../schema/index.js';
import type { ActionDefinition } from './registry.js';

/**
 * `catalog/action/get_entity`: the entity read. Bad input and unreadable data do not fail the step:
 * they come back in `body.error`.
 */
export const getEntityAction: ActionDefinition = {
  provider: 'catalog',
  module: 'action',
  action: 'get_entity',
  description: 'Reads an entity: select, filter, order and page.',
  // The read checks its own input strictly and reports problems in its output.
  input: z.unknown(),
  run: (input, context) => context.catalog.getEntity(input as GetEntityInput, { signal: context.signal }),
};
