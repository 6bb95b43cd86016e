/**
 * What `platform/dummy/dummy_task` takes: any object. Apart from the schema, so the action registry
 * can accept such input without running zod (whose parse returns it as it is). @internal
 */
export function isDummyTaskInput(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
