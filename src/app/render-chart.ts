/**
 * The HTML of `chart` and `metric` components: a chart is server-side SVG (an image with a name)
 * beside a table of its values that screen readers read; a metric is one big number under its label.
 * @module
 */
import { escapeHtml } from './html.js';
import type { ChartPoint, ResolvedChart, ResolvedMetric } from './types.js';

/**
 * Colours of pie slices and of the line and bars: each at least 3:1 against white (and the slices
 * apart by a white edge), so no part of a chart depends on telling two light colours apart.
 */
const PALETTE = ['#0b57d0', '#b3261e', '#146c2e', '#8a4f00', '#6f3fb5', '#00658f', '#a8005c', '#4d5b00'];
/** Lines of the grid and axes, and the text of the axes (5.9:1 against white). */
const GRID = '#d1d9e0';
const AXIS_TEXT = '#59636e';

const WIDTH = 400;
const HEIGHT = 260;
const LEFT = 48;
const RIGHT = 16;
const TOP = 16;
const BOTTOM = 40;
/** Longest label written under a bar or point; the table has it whole. */
const LABEL_CHARS = 10;

/** Renders a resolved chart. @internal */
export function renderChart(chart: ResolvedChart): string {
  const caption = `<figcaption>${escapeHtml(chart.title)}</figcaption>`;
  if (chart.error)
    return `<figure class="c-chart">${caption}<p class="grid-error" role="alert">${escapeHtml(chart.error)}</p></figure>`;
  if (chart.points.length === 0)
    return `<figure class="c-chart">${caption}<p class="status">There is nothing to show here yet.</p></figure>`;
  const svg = chart.kind === 'pie' ? pieSvg(chart) : chart.kind === 'line' ? lineSvg(chart) : barSvg(chart);
  const note = chart.truncated
    ? `<p class="status">The first ${chart.points.length} values are shown.</p>`
    : '';
  return `<figure class="c-chart">${caption}<div class="chart-body">${svg}${dataTable(chart)}</div>${note}</figure>`;
}

/** Renders a resolved metric. @internal */
export function renderMetric(metric: ResolvedMetric): string {
  const value = metric.error
    ? `<dd class="grid-error" role="alert">${escapeHtml(metric.error)}</dd>`
    : `<dd class="metric-value">${escapeHtml(metric.text === '' ? '–' : metric.text)}</dd>`;
  return `<div class="c-metric"><dl><dt>${escapeHtml(metric.label)}</dt>${value}</dl></div>`;
}

/** The chart's values as a table: what screen readers read, and the pie's legend. */
function dataTable(chart: ResolvedChart): string {
  const rows = chart.points
    .map((p, i) => {
      const swatch =
        chart.kind === 'pie'
          ? `<span class="swatch" style="background:${colour(i)}" aria-hidden="true"></span>`
          : '';
      return `<tr><th scope="row">${swatch}${escapeHtml(p.label)}</th><td class="num">${escapeHtml(p.text)}</td></tr>`;
    })
    .join('');
  return `<div class="table-wrap chart-data"><table><caption class="visually-hidden">${escapeHtml(`Values of ${chart.title}`)}</caption><thead><tr><th scope="col">${escapeHtml(chart.xLabel)}</th><th scope="col" class="num">${escapeHtml(chart.yLabel)}</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The `<svg>` element: an image named by `label`, its own `<title>` the same text. */
function svgOf(label: string, width: number, height: number, body: string): string {
  const name = escapeHtml(label);
  return `<svg class="chart" role="img" aria-label="${name}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg" font-family="system-ui, sans-serif" font-size="13"><title>${name}</title>${body}</svg>`;
}

/** What the image says in words: its kind, title and range of values. */
function summary(chart: ResolvedChart): string {
  const kind = chart.kind === 'bar' ? 'Bar chart' : chart.kind === 'line' ? 'Line chart' : 'Pie chart';
  const count = chart.points.length;
  return `${kind}: ${chart.title}, ${count} ${count === 1 ? 'value' : 'values'} of ${chart.yLabel} by ${chart.xLabel}; the table beside it lists them.`;
}

function barSvg(chart: ResolvedChart): string {
  const { scale, axis } = valueAxis(chart.points);
  const slot = (WIDTH - LEFT - RIGHT) / chart.points.length;
  const width = Math.max(1, Math.min(slot * 0.7, 64));
  const zero = scale(0);
  const bars = chart.points
    .map((p, i) => {
      if (p.value === null) return '';
      const x = LEFT + slot * i + (slot - width) / 2;
      const y = Math.min(scale(p.value), zero);
      const h = Math.max(Math.abs(scale(p.value) - zero), p.value === 0 ? 0 : 1);
      return `<rect x="${num(x)}" y="${num(y)}" width="${num(width)}" height="${num(h)}" fill="${PALETTE[0]}"><title>${escapeHtml(`${p.label}: ${p.text}`)}</title></rect>`;
    })
    .join('');
  return svgOf(summary(chart), WIDTH, HEIGHT, `${axis}${bars}${xLabels(chart.points, slot)}`);
}

function lineSvg(chart: ResolvedChart): string {
  const { scale, axis } = valueAxis(chart.points);
  const slot = (WIDTH - LEFT - RIGHT) / chart.points.length;
  const at = (i: number) => LEFT + slot * i + slot / 2;
  // A point without a value breaks the line: it is not drawn at zero.
  const runs: string[][] = [[]];
  chart.points.forEach((p, i) => {
    if (p.value === null) runs.push([]);
    else runs.at(-1)!.push(`${num(at(i))},${num(scale(p.value))}`);
  });
  const lines = runs
    .filter((run) => run.length > 1)
    .map(
      (run) =>
        `<polyline points="${run.join(' ')}" fill="none" stroke="${PALETTE[0]}" stroke-width="2.5" stroke-linejoin="round"/>`,
    )
    .join('');
  const dots = chart.points
    .map((p, i) =>
      p.value === null
        ? ''
        : `<circle cx="${num(at(i))}" cy="${num(scale(p.value))}" r="4" fill="${PALETTE[0]}"><title>${escapeHtml(`${p.label}: ${p.text}`)}</title></circle>`,
    )
    .join('');
  return svgOf(summary(chart), WIDTH, HEIGHT, `${axis}${lines}${dots}${xLabels(chart.points, slot)}`);
}

function pieSvg(chart: ResolvedChart): string {
  const size = 320;
  const c = size / 2;
  const r = c - 8;
  // A slice is a share of the positive values; others (none, zero, negative) have no slice.
  const total = chart.points.reduce((sum, p) => sum + (p.value !== null && p.value > 0 ? p.value : 0), 0);
  let angle = -Math.PI / 2;
  const slices = chart.points
    .map((p, i) => {
      if (p.value === null || p.value <= 0 || total <= 0) return '';
      const share = p.value / total;
      const title = `<title>${escapeHtml(`${p.label}: ${p.text} (${Math.round(share * 100)}%)`)}</title>`;
      if (share >= 0.999999)
        return `<circle cx="${c}" cy="${c}" r="${r}" fill="${colour(i)}" stroke="#ffffff" stroke-width="2">${title}</circle>`;
      const start = angle;
      angle += share * 2 * Math.PI;
      const large = share > 0.5 ? 1 : 0;
      const [x1, y1] = [c + r * Math.cos(start), c + r * Math.sin(start)];
      const [x2, y2] = [c + r * Math.cos(angle), c + r * Math.sin(angle)];
      return `<path d="M${c},${c} L${num(x1)},${num(y1)} A${r},${r} 0 ${large} 1 ${num(x2)},${num(y2)} Z" fill="${colour(i)}" stroke="#ffffff" stroke-width="2">${title}</path>`;
    })
    .join('');
  return svgOf(summary(chart), size, size, slices);
}

/** The value axis: a scale from values to y, and the grid lines with their labels. */
function valueAxis(points: ChartPoint[]): { scale: (v: number) => number; axis: string } {
  const values = points.flatMap((p) => (p.value === null ? [] : [p.value]));
  let low = Math.min(0, ...values);
  let high = Math.max(0, ...values);
  if (high === low) high = low + 1;
  const step = niceStep((high - low) / 4);
  low = Math.floor(low / step) * step;
  high = Math.ceil(high / step) * step;
  const scale = (v: number) => TOP + ((high - v) / (high - low)) * (HEIGHT - TOP - BOTTOM);
  const format = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 2 });
  let axis = '';
  for (let v = low, n = 0; v <= high + step / 2 && n < 20; v += step, n++) {
    const y = num(scale(v));
    const value = Math.abs(v) < step / 1e6 ? 0 : v;
    axis += `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y}" y2="${y}" stroke="${value === 0 ? AXIS_TEXT : GRID}" stroke-width="1"/>`;
    axis += `<text x="${LEFT - 8}" y="${y}" text-anchor="end" dominant-baseline="middle" fill="${AXIS_TEXT}">${escapeHtml(format.format(value))}</text>`;
  }
  return { scale, axis };
}

/** Labels under the points, every one or every few so that they do not overlap. */
function xLabels(points: ChartPoint[], slot: number): string {
  const every = Math.max(1, Math.ceil(72 / slot));
  return points
    .map((p, i) => {
      if (i % every !== 0) return '';
      const text = p.label.length > LABEL_CHARS ? `${p.label.slice(0, LABEL_CHARS - 1)}…` : p.label;
      return `<text x="${num(LEFT + slot * i + slot / 2)}" y="${HEIGHT - BOTTOM + 20}" text-anchor="middle" fill="${AXIS_TEXT}">${escapeHtml(text)}</text>`;
    })
    .join('');
}

/** A step of 1, 2 or 5 times a power of ten, at least `raw`. */
function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

function colour(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

/** A coordinate with at most two decimals. */
function num(value: number): string {
  return String(Math.round(value * 100) / 100);
}
