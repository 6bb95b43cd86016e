/**
 * How a thrown value becomes a run's error (`{ code, message }`), whatever was thrown: a stepwire
 * error keeps its code (and a validation error its issues), anything else is `step_failed`.
 *
 * @module
 */
import { ValidationError, isStepwireError } from '../errors/index.js';
import type { RunError } from './record.js';

/** A thrown value as a run error; `abort` (the run's stop) wins over what was thrown. @internal */
export function toRunError(error: unknown, abort?: RunError): RunError {
  if (abort) return abort;
  try {
    if (error instanceof ValidationError)
      return { code: error.code, message: error.message, issues: error.issues };
    if (isStepwireError(error)) return { code: error.code, message: error.message };
    if (
      typeof error === 'object' &&
      error !== null &&
      'code' in error &&
      'message' in error &&
      typeof (error as RunError).code === 'string'
    ) {
      return { code: (error as RunError).code, message: thrownText((error as RunError).message) };
    }
  } catch {
    // A thrown value whose properties throw when read: told as a value that cannot be read.
  }
  return { code: 'step_failed', message: errorMessage(error) };
}

/** The message of a thrown value: an error's own, else the value as text. @internal */
export function errorMessage(error: unknown): string {
  try {
    return error instanceof Error ? thrownText(error.message) : thrownText(error);
  } catch {
    return thrownText(undefined);
  }
}

/** A thrown value as text, whatever it is: one that cannot be made a string is said to be so. */
export function thrownText(value: unknown): string {
  try {
    return String(value);
  } catch {
    return 'a thrown value that cannot be shown as text';
  }
}
