import {
  CancelledError,
  ConflictError,
  LimitError,
  NonRetryableError,
  NotFoundError,
  ForbiddenError,
  RequestRefusedError,
  ScriptError,
  SheetError,
  StepwireError,
  UpstreamError,
  ValidationError,
  WriteRejectedError,
} from './classes.js';

/**
 * The `name` of every error class stepwire defines, including those defined next to the code that
 * raises them. A guard accepts an error of a second copy of the package (same name, other class
 * object) only when its name is listed here, so a new subclass of {@link StepwireError} adds its
 * name to this set.
 */
const STEPWIRE_ERROR_NAMES: ReadonlySet<string> = new Set([
  'StepwireError',
  'ValidationError',
  'ConflictError',
  'NotFoundError',
  'ForbiddenError',
  'SheetError',
  'WriteRejectedError',
  'LimitError',
  'RequestRefusedError',
  'CancelledError',
  'NonRetryableError',
  'ScriptError',
  'UpstreamError',
  'StorageError',
  'StepReferenceError',
  'MissingSecretError',
  'RedirectError',
  'HttpProblemError',
  'TriggerFireError',
  'MailOutcomeUnknownError',
]);

/** True when `error` has the shape of a stepwire error named `name` (any stepwire name when omitted). */
function hasStepwireShape(error: unknown, name?: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name: actual, code, message } = error as { name?: unknown; code?: unknown; message?: unknown };
  if (typeof actual !== 'string' || typeof code !== 'string' || typeof message !== 'string') return false;
  return name === undefined ? STEPWIRE_ERROR_NAMES.has(actual) : actual === name;
}

/**
 * True when `error` is a stepwire error: an instance of {@link StepwireError}, or an error of another
 * copy of the package with one of stepwire's error names and a string `code`. Other errors with a
 * `code`, such as Node's `ENOENT` errors, are not.
 */
export function isStepwireError(error: unknown): error is StepwireError {
  return error instanceof StepwireError || hasStepwireShape(error);
}

/** True when `error` is a {@link ValidationError}, also from another copy of the package. */
export function isValidationError(error: unknown): error is ValidationError {
  return error instanceof ValidationError || hasStepwireShape(error, 'ValidationError');
}

/** True when `error` is a {@link ConflictError}, also from another copy of the package. */
export function isConflictError(error: unknown): error is ConflictError {
  return error instanceof ConflictError || hasStepwireShape(error, 'ConflictError');
}

/** True when `error` is a {@link NotFoundError}, also from another copy of the package. */
export function isNotFoundError(error: unknown): error is NotFoundError {
  return error instanceof NotFoundError || hasStepwireShape(error, 'NotFoundError');
}

/** True when `error` is a {@link ForbiddenError}, also from another copy of the package. */
export function isForbiddenError(error: unknown): error is ForbiddenError {
  return error instanceof ForbiddenError || hasStepwireShape(error, 'ForbiddenError');
}

/** True when `error` is a {@link SheetError}, also from another copy of the package. */
export function isSheetError(error: unknown): error is SheetError {
  return error instanceof SheetError || hasStepwireShape(error, 'SheetError');
}

/** True when `error` is a {@link WriteRejectedError}, also from another copy of the package. */
export function isWriteRejectedError(error: unknown): error is WriteRejectedError {
  return error instanceof WriteRejectedError || hasStepwireShape(error, 'WriteRejectedError');
}

/** True when `error` is a {@link LimitError}, also from another copy of the package. */
export function isLimitError(error: unknown): error is LimitError {
  return error instanceof LimitError || hasStepwireShape(error, 'LimitError');
}

/** True when `error` is a {@link RequestRefusedError}, also from another copy of the package. */
export function isRequestRefusedError(error: unknown): error is RequestRefusedError {
  return error instanceof RequestRefusedError || hasStepwireShape(error, 'RequestRefusedError');
}

/** True when `error` is a {@link CancelledError}, also from another copy of the package. */
export function isCancelledError(error: unknown): error is CancelledError {
  return error instanceof CancelledError || hasStepwireShape(error, 'CancelledError');
}

/** True when `error` is a {@link NonRetryableError}, also from another copy of the package. */
export function isNonRetryableError(error: unknown): error is NonRetryableError {
  return error instanceof NonRetryableError || hasStepwireShape(error, 'NonRetryableError');
}

/** True when `error` is a {@link ScriptError}, also from another copy of the package. */
export function isScriptError(error: unknown): error is ScriptError {
  return error instanceof ScriptError || hasStepwireShape(error, 'ScriptError');
}

/** True when `error` is an {@link UpstreamError}, also from another copy of the package. */
export function isUpstreamError(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError || hasStepwireShape(error, 'UpstreamError');
}
