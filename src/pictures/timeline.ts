import type { RunRecord, StepRecord } from '../schema/index.js';
import { MUTED, STATUS_COLOURS, escapeXml, formatMs, num, svgOpen, textElement } from './svg.js';
import { checkRunRecord, itemGroups, runSpan, stepSummary } from './timing.js';

/** Options of {@link runTimelineSvg}. */
export interface RunTimelineOptions {
  /**
   * The time a run that has not finished is drawn up to (its running steps' bars end there).
   * @default the latest time in the record
   */
  now?: Date | number;
}

const NAME_COLUMN = 184;
const CHART = 520;
const INFO_COLUMN = 236;
const WIDTH = NAME_COLUMN + CHART + INFO_COLUMN + 24;
const HEADER = 64;
const AXIS = 26;
const ROW = 28;
const ERROR_ROW = 18;
const BAR = 16;

/**
 * A run as an SVG timeline: one bar per step on a time axis from the run's start, coloured by status,
 * with its duration, attempts (retries) and, for a for_each step, its item counts; the failing
 * step's error is written under its bar. Every text is escaped. A run that is still going is drawn
 * up to `now`, so reloading shows it move on.
 * @example
 * ```ts
 * const svg = runTimelineSvg(await engine.getRun(id), { now: Date.now() });
 * ```
 */
export function runTimelineSvg(record: RunRecord, options: RunTimelineOptions = {}): string {
  checkRunRecord(record, 'runTimelineSvg');
  const span = runSpan(record, options.now);
  const scale = (ms: number) => NAME_COLUMN + ((ms - span.start) / span.length) * CHART;
  const title = `${record.workflow} · run ${record.id}`;
  const runError = record.error && !record.steps.some((s) => s.error && s.name === record.error?.step);
  let y = HEADER + AXIS;
  const rows = record.steps.map((step) => {
    const row = stepRow(step, y, scale, span.end);
    y += ROW + (step.error ? ERROR_ROW : 0);
    return row;
  });
  const chartBottom = y;
  const footer = runError
    ? textElement(`${record.error!.code}: ${record.error!.message}`, 24, chartBottom + 20, {
        width: WIDTH - 48,
        size: 12,
        className: 'run-error',
        fill: STATUS_COLOURS['failed']!,
      })
    : '';
  const height = chartBottom + (runError ? 32 : 12);
  const status = `${record.status} · ${formatMs(span.end - span.start)}${record.finished_at ? '' : ' so far'} · started ${record.started_at}`;
  return (
    svgOpen(WIDTH, height, title, 'stepwire-timeline') +
    textElement(title, 24, 28, { width: WIDTH - 48, size: 15, className: 'title', bold: true }) +
    textElement(status, 24, 48, {
      width: WIDTH - 48,
      size: 12,
      className: 'run-status',
      fill: STATUS_COLOURS[record.status] ?? MUTED,
    }) +
    axisSvg(span.length, HEADER, chartBottom, scale, span.start) +
    rows.join('') +
    footer +
    '</svg>\n'
  );
}

function stepRow(step: StepRecord, top: number, scale: (ms: number) => number, now: number): string {
  const summary = stepSummary(step, now);
  const colour = STATUS_COLOURS[step.status] ?? MUTED;
  const middle = top + ROW / 2;
  const x = scale(summary.start);
  const barWidth = Math.max(step.status === 'skipped' ? 3 : 2, scale(summary.end) - x);
  const skipped = step.status === 'skipped';
  const bar =
    `<rect class="bar" x="${num(x)}" y="${num(middle - (skipped ? 4 : BAR / 2))}" width="${num(barWidth)}" height="${skipped ? 8 : BAR}" rx="3" fill="${colour}"${step.status === 'running' ? ' fill-opacity="0.7"' : ''}>` +
    `<title>${escapeXml(`${step.name}: ${summary.text}`)}</title></rect>`;
  const items = itemsBar(step, x, barWidth, middle + BAR / 2 + 2);
  const error = step.error
    ? textElement(step.error.message, NAME_COLUMN, top + ROW + 10, {
        width: CHART + INFO_COLUMN,
        size: 11,
        className: 'step-error',
        fill: STATUS_COLOURS['failed']!,
      })
    : '';
  return (
    `<g class="step" data-status="${escapeXml(step.status)}">` +
    textElement(step.name, NAME_COLUMN - 12, middle + 4, {
      width: NAME_COLUMN - 36,
      size: 12,
      className: 'name',
      anchor: 'end',
    }) +
    bar +
    items +
    textElement(summary.text, NAME_COLUMN + CHART + 12, middle + 4, {
      width: INFO_COLUMN - 12,
      size: 11,
      className: 'info',
      fill: step.status === 'failed' ? colour : MUTED,
    }) +
    error +
    '</g>'
  );
}

/**
 * The items of a for_each step as a thin bar under the step's, split by outcome (succeeded, failed,
 * skipped) in proportion to their counts.
 */
function itemsBar(step: StepRecord, x: number, width: number, y: number): string {
  const groups = itemGroups(step);
  const total = groups ? groups.succeeded + groups.failed + groups.skipped : 0;
  if (!groups || total === 0) return '';
  let at = x;
  const parts = (['succeeded', 'failed', 'skipped'] as const).flatMap((status) => {
    const count = groups[status];
    if (count === 0) return [];
    const share = (width * count) / total;
    const part = `<rect class="item-group" data-status="${status}" x="${num(at)}" y="${num(y)}" width="${num(Math.max(1, share))}" height="4" fill="${STATUS_COLOURS[status]}"><title>${escapeXml(`${count} of ${total} items ${status}`)}</title></rect>`;
    at += share;
    return [part];
  });
  return parts.join('');
}

function axisSvg(
  length: number,
  top: number,
  bottom: number,
  scale: (ms: number) => number,
  start: number,
): string {
  const tick = tickStep(length);
  const parts = [
    `<line x1="${NAME_COLUMN}" y1="${top + AXIS - 6}" x2="${NAME_COLUMN + CHART}" y2="${top + AXIS - 6}" stroke="${MUTED}" stroke-width="1"/>`,
  ];
  for (let t = 0; t <= length + 0.5; t += tick) {
    const x = scale(start + t);
    parts.push(
      `<line x1="${num(x)}" y1="${top + AXIS - 10}" x2="${num(x)}" y2="${bottom}" stroke="#d0d7de" stroke-width="1"${t === 0 ? '' : ' stroke-dasharray="2 3"'}/>`,
      `<text class="tick" x="${num(x)}" y="${top + AXIS - 14}" font-size="10" fill="${MUTED}" text-anchor="middle">${escapeXml(formatMs(t))}</text>`,
    );
  }
  return `<g class="axis" stroke-linecap="butt"><title>${escapeXml(`time since the run started`)}</title>${parts.join('')}</g>`;
}

/** A round step (1, 2 or 5 times a power of ten ms) giving at most six ticks. */
function tickStep(length: number): number {
  if (!(length > 0 && length < Number.MAX_SAFE_INTEGER))
    return Math.max(1, Number.isFinite(length) ? length : 1);
  for (let power = 1; ; power *= 10)
    for (const unit of [1, 2, 5]) if (length / (unit * power) <= 6) return unit * power;
}
