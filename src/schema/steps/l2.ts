import { z } from 'zod';
import { defineStepSchema } from './base.js';

/** `l2_data`: a named action of a provider and module. */
export const L2DataSchema = z.object({
  provider: z.string().min(1),
  module: z.string().min(1),
  action: z.string().min(1),
  input_data: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** An `l2` step: runs the action named by its `l2_data` with `input_data` as input. */
export const L2StepSchema = defineStepSchema('l2', L2DataSchema);

/** `l2_data` of a step. */
export type L2Data = z.infer<typeof L2DataSchema>;
