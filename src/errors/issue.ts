/** One problem found while validating input: where it is and what is wrong. */
export interface Issue {
  /** Stable machine-readable code, e.g. `invalid_type`, `unknown_column`. */
  code: string;
  /** Where the problem is, as a dotted path with `[i]` indexes, e.g. `steps[0].l2_data.action`; `""` for the root. */
  path: string;
  /** A sentence a person understands. */
  message: string;
}

/** Formats one issue as `path: message`, or just the message when the issue is about the root. */
export function formatIssue(issue: Pick<Issue, 'path' | 'message'>): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

/** Formats issues on one line, each as `path: message`, separated by `; `: the first 20, then how many more. */
export function formatIssues(issues: readonly Pick<Issue, 'path' | 'message'>[]): string {
  if (issues.length <= MOST_FORMATTED) return issues.map(formatIssue).join('; ');
  // A message for a person: the first problems say what is wrong; `issues` keeps every one.
  const first = issues.slice(0, MOST_FORMATTED).map(formatIssue).join('; ');
  return `${first}; and ${issues.length - MOST_FORMATTED} more problems`;
}

/** Most problems {@link formatIssues} spells out. */
const MOST_FORMATTED = 20;

/**
 * The issues as found under `at`: each path becomes `<at><separator><path>` (just `at` for the root),
 * e.g. `input_data.amount` or `workflows/x.json: steps[0]`. A path that starts with a bracket (an
 * index or a quoted key, `[0]`, `["odd.key"]`) follows a `.` separator's `at` directly:
 * `rows[0]`, `input_data["odd.key"]`.
 */
export function issuesUnder(issues: readonly Issue[], at: string, separator = '.'): Issue[] {
  return issues.map((issue) => {
    if (!issue.path) return { ...issue, path: at };
    const join = separator === '.' && issue.path.startsWith('[') ? '' : separator;
    return { ...issue, path: `${at}${join}${issue.path}` };
  });
}
