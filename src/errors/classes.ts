import { formatIssues, type Issue } from './issue.js';

/** Options common to every stepwire error. */
export interface StepwireErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
}

/** Base class of every error stepwire raises on purpose. */
export class StepwireError extends Error {
  /** Stable machine-readable code of the error kind. */
  readonly code: string;
  /** Always `"StepwireError"`, so guards also work across package copies. */
  override name = 'StepwireError';

  constructor(code: string, message: string, options: StepwireErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** Input failed validation; `issues` lists every problem with its path. */
export class ValidationError extends StepwireError {
  /** Always `"ValidationError"`, so guards also work across package copies. */
  override name = 'ValidationError';
  /** Every problem found, never only the first. */
  readonly issues: Issue[];

  constructor(issues: Issue[], message?: string, options?: StepwireErrorOptions) {
    super('validation_failed', message ?? formatIssues(issues), options);
    this.issues = issues;
  }
}

/** A resource with that name already exists. */
export class ConflictError extends StepwireError {
  /** Always `"ConflictError"`, so guards also work across package copies. */
  override name = 'ConflictError';
  constructor(
    /** Kind of resource, e.g. `entity`. */
    readonly resource: string,
    /** Name that is taken. */
    readonly resourceName: string,
    options?: StepwireErrorOptions,
  ) {
    super('conflict', `${resource} "${resourceName}" already exists`, options);
  }
}

/** A named resource does not exist. */
export class NotFoundError extends StepwireError {
  /** Always `"NotFoundError"`, so guards also work across package copies. */
  override name = 'NotFoundError';
  /** The input fields that named a missing resource, one issue each (empty when the name came from the URL). */
  readonly issues: Issue[];

  constructor(
    /** Kind of resource, e.g. `workflow`. */
    readonly resource: string,
    /** Name that was looked up. */
    readonly resourceName: string,
    options: StepwireErrorOptions & {
      /** The input fields naming missing resources, each with its message. */
      issues?: Issue[];
    } = {},
  ) {
    super('not_found', `${resource} "${resourceName}" does not exist`, options);
    this.issues = options.issues ?? [];
  }
}

/**
 * The principal lacks a permission, or named a column hidden from it (code `forbidden`, HTTP 403).
 * The message names the permission or the column, never data the principal may not see.
 */
export class ForbiddenError extends StepwireError {
  /** Always `"ForbiddenError"`, so guards also work across package copies. */
  override name = 'ForbiddenError';
  constructor(
    message: string,
    /** The permission missing (`entity.read`, `definitions.write`...), when one is. */
    readonly permission?: string,
    options?: StepwireErrorOptions,
  ) {
    super('forbidden', message, options);
  }
}

/** A spreadsheet cell could not be read as its column's type. `cell` is in A1 notation. */
export class SheetError extends StepwireError {
  /** Always `"SheetError"`, so guards also work across package copies. */
  override name = 'SheetError';
  constructor(
    message: string,
    /** Where: spreadsheet, sheet and cell (A1) or range. */
    readonly location: { spreadsheet_id: string; sheet_name: string; cell?: string; range?: string },
    options?: StepwireErrorOptions & { code?: string },
  ) {
    super(options?.code ?? 'sheet_error', message, options);
  }
}

/**
 * A write broke a rule (type, primary key, foreign key); nothing was written. Its code is
 * `write_conflict` when every problem is a conflict with what the sheets hold (a key taken, a key
 * missing, a row still referenced, a foreign key matching no row), else `write_rejected`.
 */
export class WriteRejectedError extends StepwireError {
  /** Always `"WriteRejectedError"`, so guards also work across package copies. */
  override name = 'WriteRejectedError';
  constructor(
    /** Every rule broken, each naming the entity, row and key. */
    readonly issues: Issue[],
    options?: StepwireErrorOptions & {
      /** True when every problem is a conflict with the sheet's rows (code `write_conflict`). */
      conflict?: boolean;
    },
  ) {
    super(
      options?.conflict ? 'write_conflict' : 'write_rejected',
      `Nothing was written: ${formatIssues(issues)}`,
      options,
    );
  }
}

/** A configured limit (time, memory, size, count) was exceeded. */
export class LimitError extends StepwireError {
  /** Always `"LimitError"`, so guards also work across package copies. */
  override name = 'LimitError';
  constructor(
    /** Which limit, e.g. `script.timeout`, `request.maxResponseBytes`. */
    readonly limit: string,
    message: string,
    options?: StepwireErrorOptions,
  ) {
    super('limit_exceeded', message, options);
  }
}

/** An outbound request was refused before any connection (address not allowed, bad scheme). */
export class RequestRefusedError extends StepwireError {
  /** Always `"RequestRefusedError"`, so guards also work across package copies. */
  override name = 'RequestRefusedError';
  constructor(message: string, options?: StepwireErrorOptions) {
    super('request_refused', message, options);
  }
}

/** The operation was cancelled through an `AbortSignal`. */
export class CancelledError extends StepwireError {
  /** Always `"CancelledError"`, so guards also work across package copies. */
  override name = 'CancelledError';
  constructor(message = 'The operation was cancelled', options?: StepwireErrorOptions) {
    super('cancelled', message, options);
  }
}

/** An error an action throws to say that retrying cannot help. */
export class NonRetryableError extends StepwireError {
  /** Always `"NonRetryableError"`, so guards also work across package copies. */
  override name = 'NonRetryableError';
  constructor(message: string, options?: StepwireErrorOptions) {
    super('non_retryable', message, options);
  }
}

/** A transform script failed: its own error, with the script's line when known. */
export class ScriptError extends StepwireError {
  /** Always `"ScriptError"`, so guards also work across package copies. */
  override name = 'ScriptError';
  constructor(
    message: string,
    /** 1-based line in the script, when known. */
    readonly line?: number,
    options?: StepwireErrorOptions,
  ) {
    super('script_error', line === undefined ? message : `line ${line}: ${message}`, options);
  }
}

/** An outside service (spreadsheet, file store, chat, HTTP) answered with an error. */
export class UpstreamError extends StepwireError {
  /** Always `"UpstreamError"`, so guards also work across package copies. */
  override name = 'UpstreamError';
  constructor(
    message: string,
    /** HTTP status of the answer, when there was one. */
    readonly status?: number,
    options?: StepwireErrorOptions & { retryable?: boolean },
  ) {
    super('upstream_error', message, options);
    this.retryable =
      options?.retryable ?? (status === undefined || status === 408 || status === 429 || status >= 500);
  }
  /** Whether trying again may succeed (408, 429, 5xx, network errors). */
  readonly retryable: boolean;
}
