import type { StepwireError } from './classes.js';
import { isLimitError, isStepwireError } from './guards.js';

/** How errors with one code are answered: an HTTP status and a title, the same for every such error. */
export interface ErrorAnswer {
  /** The HTTP status code of the answer. */
  readonly status: number;
  /** A short summary of the kind of problem (the problem details `title`). */
  readonly title: string;
}

/**
 * How a stepwire error is answered, by its `code`: the one table the HTTP handler turns errors into
 * statuses with (the answer's body carries the code, the error's message and its issues).
 *
 * | code | status | raised by |
 * | --- | --- | --- |
 * | `validation_failed` | 400 | `ValidationError`: the input is invalid; every issue is listed |
 * | `write_rejected` | 400 | `WriteRejectedError`: a write broke a rule; every issue is listed |
 * | `write_conflict` | 409 | `WriteRejectedError`: a key taken or missing, a row still referenced |
 * | `not_found` | 404 | `NotFoundError`; also a row or run the principal may not see |
 * | `forbidden` | 403 | `ForbiddenError`: a permission missing, or a hidden column named |
 * | `conflict` | 409 | `ConflictError` |
 * | `sheet_not_found`, `missing_column`, `duplicate_column`, `invalid_cell`, `invalid_file`, `rows_moved` | 409 | `SheetError`: the sheet is missing, holds what the entity's columns cannot be read from (the message names the sheet, header range or A1 cell), or changed while being written |
 * | `permission_denied`, `sheet_error` | 502 | `SheetError`: the spreadsheet service refused or failed the call |
 * | `limit_exceeded` | 422, or 413 when the limit is on what the caller sent (its `limit` starts with `http.`) | `LimitError` |
 * | `cancelled` | 503 | `CancelledError`: the work was cancelled, e.g. the server is shutting down |
 * | `upstream_error` | 502 | `UpstreamError`: an outside service answered with an error |
 * | `locked`, `unavailable`, `closed` | 503 | a `StorageError` or a `SheetError` `locked`: the database or spreadsheet file is held by another process, unreachable or closed |
 *
 * Any other error, stepwire's or not, is unexpected: 500 with a generic message that tells nothing
 * about the internals.
 */
export const ERROR_CODES: Readonly<Record<string, ErrorAnswer>> = {
  validation_failed: { status: 400, title: 'Bad Request' },
  write_rejected: { status: 400, title: 'Bad Request' },
  write_conflict: { status: 409, title: 'Conflict' },
  not_found: { status: 404, title: 'Not Found' },
  forbidden: { status: 403, title: 'Forbidden' },
  conflict: { status: 409, title: 'Conflict' },
  sheet_not_found: { status: 409, title: 'Conflict' },
  missing_column: { status: 409, title: 'Conflict' },
  duplicate_column: { status: 409, title: 'Conflict' },
  invalid_cell: { status: 409, title: 'Conflict' },
  invalid_file: { status: 409, title: 'Conflict' },
  rows_moved: { status: 409, title: 'Conflict' },
  permission_denied: { status: 502, title: 'Bad Gateway' },
  sheet_error: { status: 502, title: 'Bad Gateway' },
  limit_exceeded: { status: 422, title: 'Unprocessable Content' },
  cancelled: { status: 503, title: 'Service Unavailable' },
  upstream_error: { status: 502, title: 'Bad Gateway' },
  locked: { status: 503, title: 'Service Unavailable' },
  unavailable: { status: 503, title: 'Service Unavailable' },
  closed: { status: 503, title: 'Service Unavailable' },
  outcome_unknown: { status: 502, title: 'Bad Gateway' },
  timed_out: { status: 409, title: 'Conflict' },
  not_supported: { status: 422, title: 'Unprocessable Content' },
};

/** The answer to a limit on what the caller sent (a {@link LimitError} whose `limit` starts with `http.`). */
const LIMIT_ON_REQUEST: ErrorAnswer = { status: 413, title: 'Content Too Large' };

/** The answer {@link ERROR_CODES} gives `error`, or `undefined` when the error is unexpected. */
export function errorAnswer(error: unknown): ErrorAnswer | undefined {
  if (!isStepwireError(error)) return undefined;
  if (isLimitError(error) && error.limit.startsWith('http.')) return LIMIT_ON_REQUEST;
  return answerForCode(error);
}

function answerForCode(error: StepwireError): ErrorAnswer | undefined {
  return Object.hasOwn(ERROR_CODES, error.code) ? ERROR_CODES[error.code] : undefined;
}
