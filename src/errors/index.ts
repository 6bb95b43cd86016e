/**
 * The error hierarchy of stepwire. Every error the library raises on purpose is a
 * {@link StepwireError} with a stable `code`; subclasses carry the fields a user needs. Guards
 * (`isStepwireError`, `isValidationError`, ...) also recognise errors of a second copy of the package
 * by their exact name, and {@link ERROR_CODES} says how each code is answered over HTTP.
 * @module
 */
export { formatIssue, formatIssues, issuesUnder, type Issue } from './issue.js';
export {
  StepwireError,
  ValidationError,
  ConflictError,
  NotFoundError,
  ForbiddenError,
  SheetError,
  WriteRejectedError,
  LimitError,
  RequestRefusedError,
  CancelledError,
  NonRetryableError,
  ScriptError,
  UpstreamError,
  type StepwireErrorOptions,
} from './classes.js';
export {
  isStepwireError,
  isValidationError,
  isConflictError,
  isNotFoundError,
  isForbiddenError,
  isSheetError,
  isWriteRejectedError,
  isLimitError,
  isRequestRefusedError,
  isCancelledError,
  isNonRetryableError,
  isScriptError,
  isUpstreamError,
} from './guards.js';
export { ERROR_CODES, errorAnswer, type ErrorAnswer } from './codes.js';
export { StorageError, isStorageError, type StorageErrorCode } from './storage-error.js';
