import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { ProblemDetails } from '../../src/http/index.js';
import type { ProblemDetailsSchema } from '../../src/http/problem.js';
import type {
  ItemFailure,
  RunError,
  RunRecord,
  RunStatus,
  RunSummary,
  StepItems,
  StepRecord,
  StepStatus,
} from '../../src/index.js';
import type {
  ItemFailureSchema,
  RunErrorSchema,
  RunRecordSchema,
  RunSummarySchema,
  StepItemsSchema,
  StepRecordSchema,
} from '../../src/schema/index.js';

describe('run record types and their zod schema', () => {
  it('are the same types', () => {
    expectTypeOf<RunRecord>().toEqualTypeOf<z.output<typeof RunRecordSchema>>();
    expectTypeOf<RunSummary>().toEqualTypeOf<z.output<typeof RunSummarySchema>>();
    expectTypeOf<StepRecord>().toEqualTypeOf<z.output<typeof StepRecordSchema>>();
    expectTypeOf<RunError>().toEqualTypeOf<z.output<typeof RunErrorSchema>>();
    expectTypeOf<StepItems>().toEqualTypeOf<z.output<typeof StepItemsSchema>>();
    expectTypeOf<ItemFailure>().toEqualTypeOf<z.output<typeof ItemFailureSchema>>();
    expectTypeOf<RunStatus>().toEqualTypeOf<RunRecord['status']>();
    expectTypeOf<StepStatus>().toEqualTypeOf<StepRecord['status']>();
    expectTypeOf<'queued'>().toExtend<RunStatus>();
    expectTypeOf<'pending'>().toExtend<StepStatus>();
  });

  it('problem details match the schema the OpenAPI document is built from', () => {
    expectTypeOf<ProblemDetails>().toEqualTypeOf<z.output<typeof ProblemDetailsSchema>>();
  });
});
