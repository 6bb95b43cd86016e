import { z } from 'zod';
import type { ActionDefinition } from './registry.js';

/** `catalog/action/get_entity`: the entity read (SPEC 4.2). Problems come back in `body.error`, as the spec says. */
export const getEntityAction: ActionDefinition = {
  provider: 'catalog',
  module: 'action',
  action: 'get_entity',
  description: 'Reads an entity: select, filter, order and page.',
  // The read checks its own input strictly and reports problems in its output.
  input: z.unknown(),
  run: (input, context) => context.catalog.getEntity(input, { signal: context.signal }),
};
