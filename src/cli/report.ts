import { formatIssue, type Issue } from '../errors/index.js';
import type { CliIo } from './io.js';

/** Prints problems one a line as `<file>: <path>: <message>` under a heading, on standard error. @internal */
export function printIssues(
  io: CliIo,
  issues: readonly Issue[],
  heading: string,
  write: (line: string) => void = io.err,
): void {
  write(heading);
  for (const issue of issues) write(`  ${formatIssue(issue)}`);
}

/** Prints warnings that did not stop the project from loading. @internal */
export function printWarnings(io: CliIo, problems: readonly Issue[]): void {
  for (const problem of problems) io.err(`warning: ${formatIssue(problem)}`);
}

export { formatMs } from '../pictures/svg.js';

/**
 * JSON for people: like `JSON.stringify(value, null, 2)`, but arrays of plain values and short
 * objects of plain values stay on one line, so table rows read as rows.
 * @internal
 */
export function formatJson(value: unknown, indent = ''): string {
  const plain = (v: unknown) => v === null || typeof v !== 'object';
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every(plain)) return `[${value.map((v) => JSON.stringify(v) ?? 'null').join(', ')}]`;
    return `[\n${value.map((v) => inner + formatJson(v, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    const parts = entries.map(([k, v]) => `${JSON.stringify(k)}: ${formatJson(v, inner)}`);
    const line = `{ ${parts.join(', ')} }`;
    if (entries.every(([, v]) => plain(v)) && line.length + indent.length <= 80) return line;
    return `{\n${parts.map((p) => inner + p).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
