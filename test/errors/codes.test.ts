import { describe, expect, it } from 'vitest';
import {
  CancelledError,
  ConflictError,
  ERROR_CODES,
  LimitError,
  NotFoundError,
  ScriptError,
  SheetError,
  UpstreamError,
  ValidationError,
  WriteRejectedError,
  errorAnswer,
} from '../../src/errors/index.js';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemoryStorage } from '../../src/index.js';
import { call } from '../http/helpers.js';

const issue = { code: 'required', path: 'customer.id', message: 'id is required' };
const sheet = { spreadsheet_id: 'shop', sheet_name: 'customers', cell: 'A3' };

/** A handler whose `GET /workflows` throws `error`. */
function failingWith(error: unknown) {
  const storage = new MemoryStorage();
  storage.list = (async () => {
    throw error;
  }) as unknown as typeof storage.list;
  return createHandler(new Engine({ storage }), { onError: () => {} });
}

/** An error as a second copy of the package would raise it. */
const copy = (name: string, code: string, extra: object = {}) =>
  Object.assign(new Error(`${name} from another copy`), { name, code, ...extra });

describe('ERROR_CODES', () => {
  it('answers each code with its status and title', () => {
    expect(errorAnswer(new ValidationError([issue]))).toEqual({ status: 400, title: 'Bad Request' });
    expect(errorAnswer(new WriteRejectedError([issue]))).toEqual({ status: 400, title: 'Bad Request' });
    expect(errorAnswer(new NotFoundError('workflow', 'w'))?.status).toBe(404);
    expect(errorAnswer(new ConflictError('entity', 'e'))?.status).toBe(409);
    expect(errorAnswer(new LimitError('script.timeout', 'slow'))?.status).toBe(422);
    expect(errorAnswer(new LimitError('http.maxBodyBytes', 'big'))).toEqual({
      status: 413,
      title: 'Content Too Large',
    });
    expect(errorAnswer(new CancelledError())?.status).toBe(503);
    expect(errorAnswer(new UpstreamError('down', 500))?.status).toBe(502);
    for (const code of [
      'sheet_not_found',
      'missing_column',
      'duplicate_column',
      'invalid_cell',
      'invalid_file',
    ])
      expect(errorAnswer(new SheetError('bad sheet', sheet, { code })), code).toEqual({
        status: 409,
        title: 'Conflict',
      });
    expect(errorAnswer(new SheetError('Sheets failed', sheet))?.status).toBe(502);
    expect(errorAnswer(new SheetError('no access', sheet, { code: 'permission_denied' }))?.status).toBe(502);
    expect(errorAnswer(new SheetError('held', sheet, { code: 'locked' }))?.status).toBe(503);
    for (const [code, answer] of Object.entries(ERROR_CODES))
      expect(errorAnswer(copy('StepwireError', code)), code).toEqual(answer);
  });

  it('leaves other errors unanswered: they are unexpected', () => {
    expect(errorAnswer(new ScriptError('boom'))).toBeUndefined();
    expect(errorAnswer(copy('StepwireError', 'constructor'))).toBeUndefined();
    expect(errorAnswer(copy('Error', 'not_found'))).toBeUndefined();
    expect(errorAnswer(new TypeError('x'))).toBeUndefined();
  });
});

describe('the handler answers errors as ERROR_CODES says', () => {
  it.each([
    ['validation', new ValidationError([issue]), 400, 'validation_failed', [issue]],
    ['write rejected', new WriteRejectedError([issue]), 400, 'write_rejected', [issue]],
    ['not found', new NotFoundError('workflow', 'w'), 404, 'not_found', []],
    ['conflict', new ConflictError('entity', 'e'), 409, 'conflict', []],
    [
      'a limit on the request',
      new LimitError('http.maxBodyBytes', 'too big'),
      413,
      'limit_exceeded',
      [{ code: 'limit_exceeded', path: '', message: 'too big' }],
    ],
    [
      'a limit hit while working',
      new LimitError('script.timeout', 'too slow'),
      422,
      'limit_exceeded',
      [{ code: 'limit_exceeded', path: '', message: 'too slow' }],
    ],
    ['cancelled', new CancelledError('shutting down'), 503, 'cancelled', []],
    ['upstream', new UpstreamError('sheet down', 503), 502, 'upstream_error', []],
    [
      'a cell that cannot be read',
      new SheetError('Cell customers!A3 holds "two"', sheet, { code: 'invalid_cell' }),
      409,
      'invalid_cell',
      [],
    ],
    ['a copy of ConflictError', copy('ConflictError', 'conflict'), 409, 'conflict', []],
    [
      'a copy of ValidationError',
      copy('ValidationError', 'validation_failed', { issues: [issue] }),
      400,
      'validation_failed',
      [issue],
    ],
  ])('%s', async (_what, error, status, code, errors) => {
    const res = await call(failingWith(error), 'GET', '/workflows');
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ status, code, detail: (error as Error).message, errors });
  });

  it.each([
    ['an ENOENT-like error', copy('Error', 'not_found')],
    ['an unknown name with a code', copy('FooError', 'conflict')],
    ['a stepwire error without a listed code', new ScriptError('secret detail')],
  ])('answers %s with a generic 500', async (_what, error) => {
    const res = await call(failingWith(error), 'GET', '/workflows');
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('internal_error');
    expect(res.text).not.toContain((error as Error).message);
  });
});
