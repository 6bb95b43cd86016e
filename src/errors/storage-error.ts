import { StepwireError, type StepwireErrorOptions } from './classes.js';

/** Why durable storage failed: the `code` of a {@link StorageError}. */
export type StorageErrorCode = 'locked' | 'unavailable' | 'schema_too_new' | 'closed';

/**
 * Durable storage could not be opened or used. `code` says why:
 * - `locked`: another process (or another open in this one) holds the embedded database directory;
 *   `pid` is the holder's, `target` the lock file, and the message names both.
 * - `unavailable`: the database server could not be reached.
 * - `schema_too_new`: the database was set up by a newer version of stepwire.
 * - `closed`: the database was closed before the call.
 */
export class StorageError extends StepwireError {
  /** Always `"StorageError"`, so guards also work across package copies. */
  override name = 'StorageError';
  /** Why storage failed. */
  declare readonly code: StorageErrorCode;
  /** The process holding the lock, for `locked` (when its lock file could be read). */
  readonly pid?: number;

  constructor(
    code: StorageErrorCode,
    message: string,
    /** What the error is about: the lock file, or the database (a URL never shows its password). */
    readonly target: string,
    options?: StepwireErrorOptions & { pid?: number },
  ) {
    super(code, message, options);
    if (options?.pid !== undefined) this.pid = options.pid;
  }
}

/** True when `error` is a {@link StorageError}, also from another copy of the package. */
export function isStorageError(error: unknown): error is StorageError {
  if (error instanceof StorageError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === 'StorageError' && typeof code === 'string';
}
