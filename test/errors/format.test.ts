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

describe('issuesUnder', () => {
  it('puts every issue under a path, the root issue at the path itself', async () => {
    const { issuesUnder } = await import('../../src/errors/index.js');
    expect(
      issuesUnder(
        [
          { code: 'a', path: 'amount', message: 'm' },
          { code: 'b', path: '', message: 'n' },
        ],
        'input_data',
      ),
    ).toEqual([
      { code: 'a', path: 'input_data.amount', message: 'm' },
      { code: 'b', path: 'input_data', message: 'n' },
    ]);
    expect(issuesUnder([{ code: 'a', path: 'x', message: 'm' }], 'f.json', ': ')[0]!.path).toBe('f.json: x');
  });

  it('puts a path that starts with a bracket (a quoted key, an index) right after the prefix', async () => {
    const { issuesUnder } = await import('../../src/errors/index.js');
    const paths = issuesUnder(
      [
        { code: 'a', path: '["odd.key"]', message: 'm' },
        { code: 'b', path: '[0].amount', message: 'n' },
      ],
      'input_data',
    ).map((issue) => issue.path);
    expect(paths).toEqual(['input_data["odd.key"]', 'input_data[0].amount']);
  });
});
