import type { RunRecord } from '../schema/index.js';
import { formatMs } from './svg.js';
import { checkRunRecord, checkSize, runSpan, stepSummary } from './timing.js';

/** Options of {@link runTimelineText}. */
export interface RunTimelineTextOptions {
  /** Characters of the bar column. @default 40 */
  width?: number;
  /** The time a run that has not finished is drawn up to. @default the latest time in the record */
  now?: Date | number;
}

const MARKS: Record<string, string> = { succeeded: '█', failed: '█', running: '░', skipped: '·' };

/**
 * A run as a text timeline for a terminal: a line per step with a bar on a shared time scale and
 * its status, duration and attempts; a failed step's error on the line below.
 * @example
 * ```ts
 * console.log(runTimelineText(await engine.run('invoice', { customer_id: 1 })));
 * // timeline of run 7f…: succeeded in 84 ms
 * //   customer  ████                                      succeeded · 12 ms
 * ```
 */
export function runTimelineText(record: RunRecord, options: RunTimelineTextOptions = {}): string {
  checkRunRecord(record, 'runTimelineText');
  checkSize(options?.width, 'runTimelineText: options.width', 1, 1000);
  const width = Math.max(10, Math.floor(options.width ?? 40));
  const span = runSpan(record, options.now);
  const column = (ms: number) => Math.round(((ms - span.start) / span.length) * width);
  const names = record.steps.map((s) => printable(s.name));
  const nameWidth = Math.min(24, Math.max(4, ...names.map((name) => [...name].length)));
  const lines = [
    `timeline of run ${printable(record.id)}: ${record.status} in ${formatMs(span.end - span.start)}${record.finished_at ? '' : ' so far'}`,
  ];
  for (const [index, step] of record.steps.entries()) {
    const summary = stepSummary(step, span.end);
    const from = Math.min(width - 1, column(summary.start));
    const to = Math.min(width, Math.max(from + 1, column(summary.end)));
    const bar = ' '.repeat(from) + (MARKS[step.status] ?? '▒').repeat(to - from) + ' '.repeat(width - to);
    lines.push(`  ${fit(names[index]!, nameWidth)}  ${bar}  ${summary.text}`);
    if (step.error) lines.push(`  ${' '.repeat(nameWidth)}  ✗ ${printable(step.error.message)}`);
  }
  if (record.error && !record.steps.some((s) => s.error && s.name === record.error?.step))
    lines.push(`  ✗ ${printable(record.error.message)}`);
  return lines.join('\n');
}

function fit(name: string, width: number): string {
  const chars = [...name];
  return chars.length > width
    ? `${chars.slice(0, width - 1).join('')}…`
    : name + ' '.repeat(width - chars.length);
}

/**
 * Text safe to print on a terminal: control characters (C0 but tab, DEL, C1; an escape sequence
 * could clear the screen or forge lines) written as `\u001b`. @internal
 */
export function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- these are exactly the characters to escape
    /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
