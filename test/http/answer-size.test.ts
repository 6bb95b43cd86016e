import { describe, expect, it } from 'vitest';
import { LimitError } from '../../src/errors/index.js';
import { problemFromError } from '../../src/http/problem.js';
import { json } from '../../src/http/route.js';

describe('an answer too large to send as JSON', () => {
  it('is a limit answered 422, not an unexpected 500', () => {
    // What JSON.stringify throws past the longest string V8 makes (a page of very large run records).
    const huge = { toJSON: () => 'x'.repeat(2 ** 29) };
    let error: unknown;
    try {
      json(200, { runs: [huge, huge] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LimitError);
    expect(problemFromError(error)).toMatchObject({ status: 422, code: 'limit_exceeded' });
  });
});
