import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { RedirectError } from '../../src/app/redirect.js';
import * as http from '../../src/http/index.js';
import * as stepwire from '../../src/index.js';
import {
  CancelledError,
  ConflictError,
  LimitError,
  NonRetryableError,
  NotFoundError,
  RequestRefusedError,
  ScriptError,
  SheetError,
  StepwireError,
  UpstreamError,
  ValidationError,
  WriteRejectedError,
  isCancelledError,
  isConflictError,
  isLimitError,
  isNonRetryableError,
  isNotFoundError,
  isRequestRefusedError,
  isScriptError,
  isSheetError,
  isStepwireError,
  isUpstreamError,
  isValidationError,
  isWriteRejectedError,
} from '../../src/errors/index.js';

/** Each guard with an error of its class. */
const GUARDS: [string, (error: unknown) => boolean, StepwireError][] = [
  ['ValidationError', isValidationError, new ValidationError([{ code: 'x', path: 'a', message: 'bad' }])],
  ['ConflictError', isConflictError, new ConflictError('entity', 'orders')],
  ['NotFoundError', isNotFoundError, new NotFoundError('workflow', 'w')],
  ['SheetError', isSheetError, new SheetError('bad cell', { spreadsheet_id: 's', sheet_name: 'x' })],
  ['WriteRejectedError', isWriteRejectedError, new WriteRejectedError([])],
  ['LimitError', isLimitError, new LimitError('script.timeout', 'too slow')],
  ['RequestRefusedError', isRequestRefusedError, new RequestRefusedError('loopback')],
  ['CancelledError', isCancelledError, new CancelledError()],
  ['NonRetryableError', isNonRetryableError, new NonRetryableError('stop')],
  ['ScriptError', isScriptError, new ScriptError('boom', 3)],
  ['UpstreamError', isUpstreamError, new UpstreamError('down', 503)],
];

/** An error as a second copy of the package would raise it: same name and code, another class. */
function fromOtherCopy(name: string, code = 'some_code'): Error {
  const error = new Error('from another copy');
  Object.assign(error, { name, code });
  return error;
}

async function enoent(): Promise<unknown> {
  return readFile('/no/such/file/anywhere').catch((error: unknown) => error);
}

describe('isStepwireError', () => {
  it('accepts stepwire errors and errors of a second copy of the package', () => {
    expect(isStepwireError(new StepwireError('x', 'm'))).toBe(true);
    for (const [, , error] of GUARDS) expect(isStepwireError(error), error.name).toBe(true);
    const copy = fromOtherCopy('ValidationError', 'validation_failed');
    expect(copy instanceof StepwireError).toBe(false);
    expect(isStepwireError(copy)).toBe(true);
  });

  it("rejects Node's ENOENT errors, unknown names with a code, and plain TypeErrors", async () => {
    const notFound = await enoent();
    expect((notFound as { code?: unknown }).code).toBe('ENOENT');
    expect(isStepwireError(notFound)).toBe(false);
    expect(isStepwireError({ name: 'FooError', code: 'x', message: '' })).toBe(false);
    expect(isStepwireError(new TypeError('nope'))).toBe(false);
    expect(isStepwireError(Object.assign(new TypeError('nope'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(
      false,
    );
    expect(isStepwireError(fromOtherCopy('Error'))).toBe(false);
    expect(isStepwireError(null)).toBe(false);
    expect(isStepwireError('ValidationError')).toBe(false);
  });

  it('needs a string code and message next to a known name', () => {
    expect(isStepwireError({ name: 'ValidationError', message: 'm' })).toBe(false);
    expect(isStepwireError({ name: 'ValidationError', code: 1, message: 'm' })).toBe(false);
    expect(isStepwireError({ name: 'ValidationError', code: 'validation_failed' })).toBe(false);
    expect(isStepwireError({ name: 'ValidationError', code: 'validation_failed', message: 'm' })).toBe(true);
  });

  it('knows the name of every error class stepwire exports, and of those it raises internally', () => {
    const exported: unknown[] = [...Object.values(stepwire), ...Object.values(http), RedirectError];
    const classes = exported.filter(
      (value): value is typeof StepwireError =>
        typeof value === 'function' && value.prototype instanceof StepwireError,
    );
    expect(classes.map((c) => c.name)).toEqual(
      expect.arrayContaining(['StepReferenceError', 'HttpProblemError', 'RedirectError']),
    );
    for (const errorClass of [StepwireError, ...classes])
      expect(isStepwireError(fromOtherCopy(errorClass.name)), errorClass.name).toBe(true);
  });
});

describe('one guard per error class', () => {
  it.each(GUARDS)('is%s accepts its class, its copies, and nothing else', (name, guard, error) => {
    expect(guard(error)).toBe(true);
    expect(guard(fromOtherCopy(name))).toBe(true);
    for (const [otherName, , other] of GUARDS) {
      if (otherName === name) continue;
      expect(guard(other), `${name} guard given a ${otherName}`).toBe(false);
      expect(guard(fromOtherCopy(otherName)), `${name} guard given a copy of ${otherName}`).toBe(false);
    }
    expect(guard(new StepwireError('x', 'm'))).toBe(false);
    expect(guard({ name, message: 'no code' })).toBe(false);
    expect(guard(new TypeError(name))).toBe(false);
  });

  it('every guard rejects an ENOENT error', async () => {
    const notFound = await enoent();
    for (const [name, guard] of GUARDS) expect(guard(notFound), name).toBe(false);
  });
});
