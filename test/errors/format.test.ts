import { describe, expect, it } from 'vitest';
import { ValidationError, formatIssue, formatIssues } from '../../src/errors/index.js';

describe('formatIssue and formatIssues', () => {
  it('write `path: message`, the message alone for the root, joined by "; "', () => {
    expect(formatIssue({ path: 'steps[0].name', message: 'name is required' })).toBe(
      'steps[0].name: name is required',
    );
    expect(formatIssue({ path: '', message: 'a JSON body is required' })).toBe('a JSON body is required');
    expect(
      formatIssues([
        { path: 'a', message: 'x' },
        { path: '', message: 'y' },
      ]),
    ).toBe('a: x; y');
    expect(new ValidationError([{ code: 'c', path: 'b', message: 'z' }]).message).toBe('b: z');
  });
});
