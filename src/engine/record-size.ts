/**
 * The size limit of a run record, one rule for runs in process and on the durable queue: the
 * finished steps' records count as they finish, no step starts once they pass the limit, and the
 * final record counts the workflow's output with them. A run past it fails with `record_too_large`
 * and its record keeps no step output.
 * @internal
 * @module
 */
import type { Issue } from '../errors/index.js';
import { jsonProblem } from './json-value.js';
import type { RunError, StepRecord } from './record.js';

/**
 * The most characters of JSON a run record's steps and output may take together: JSON text has a
 * size limit (about 512 Mi characters in V8), and records are kept (in memory, with MemoryStorage;
 * rewritten whole at every commit of a durable run).
 * @internal
 */
export const MAX_RECORD_JSON_CHARS = 64 * 1024 * 1024;

/** The code of a run's error when its record would pass {@link MAX_RECORD_JSON_CHARS}. @internal */
export const RECORD_TOO_LARGE = 'record_too_large';

/** The run's error when its record would be too large to save. @internal */
export function recordTooLarge(): RunError {
  return {
    code: RECORD_TOO_LARGE,
    message: `the run record would take more than ${MAX_RECORD_JSON_CHARS / (1024 * 1024)} MiB as JSON; the steps' outputs are not kept`,
  };
}

/**
 * Whether finished steps whose records take `stepChars` characters of JSON have passed the limit:
 * no further step starts, and the run fails with {@link recordTooLarge}.
 * @internal
 */
export function stepsTooLarge(stepChars: number): boolean {
  return stepChars > MAX_RECORD_JSON_CHARS;
}

/**
 * What keeps the final record from holding the workflow's `output` beside steps taking `stepChars`
 * characters of JSON: an issue `too_large` when the record would pass the limit, the place JSON
 * cannot hold (a BigInt, a value that holds itself, code `invalid_output`), or `undefined` when it
 * fits. Without `workflow_output` (`walk` false) the output is the map of the steps' outputs, about
 * as large again as their records, and is not walked; a `workflow_output` may repeat a value, so it is.
 * @internal
 */
export function finalOutputProblem(output: unknown, stepChars: number, walk: boolean): Issue | undefined {
  const room = MAX_RECORD_JSON_CHARS - stepChars * (walk ? 1 : 2);
  if (room < 0) return { code: 'too_large', path: '', message: recordTooLarge().message };
  return walk ? jsonProblem(output, 'invalid_output', room) : undefined;
}

/** Characters of JSON a finished step's record takes, as the record is written. @internal */
export function stepChars(step: StepRecord): number {
  return JSON.stringify(step).length;
}
