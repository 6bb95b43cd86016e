import { z } from 'zod';
import { defineStepSchema } from './base.js';

/** HTTP methods a `request` step may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/** `request_data`: an HTTP request. The method is case-insensitive and defaults to GET. */
export const RequestDataSchema = z.object({
  url: z.string().min(1),
  method: z
    .string()
    .transform((m) => m.toUpperCase())
    .pipe(z.enum(HTTP_METHODS))
    .optional(),
  headers: z.record(z.string(), z.string()).optional(),
  path_params: z.record(z.string(), z.unknown()).optional(),
  query_params: z.record(z.string(), z.unknown()).optional(),
  body: z.unknown().optional(),
});

/** A `request` step: sends the HTTP request of its `request_data`; its output is the response. */
export const RequestStepSchema = defineStepSchema('request', RequestDataSchema);

/** `request_data` of a step. */
export type RequestData = z.infer<typeof RequestDataSchema>;
