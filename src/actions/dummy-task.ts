import { DummyTaskInputSchema } from '../schema/index.js';
import type { ActionDefinition } from './registry.js';

/** `platform/dummy/dummy_task`: returns its input. */
export const dummyTaskAction: ActionDefinition<typeof DummyTaskInputSchema> = {
  provider: 'platform',
  module: 'dummy',
  action: 'dummy_task',
  description: 'Returns its input.',
  input: DummyTaskInputSchema,
  run: (input) => input,
};
