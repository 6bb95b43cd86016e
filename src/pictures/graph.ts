import type { RunRecord, Workflow } from '../schema/index.js';
import { workflowGraph, type EdgeKind, type GraphNode, type NodeLine } from './graph-model.js';
import { layeredLayout, type PlacedNode, type Point } from './layout.js';
import { INK, MUTED, STATUS_COLOURS, escapeXml, num, svgOpen, textElement, textWidth } from './svg.js';
import { checkRunRecord } from './timing.js';
import { describeValue } from '../schema/issues.js';

/** Options of {@link workflowGraphSvg}. */
export interface WorkflowGraphOptions {
  /** A run of the workflow: each step shows the status it had in that run. */
  run?: RunRecord;
}

const NODE_WIDTH = 232;
const PAD = 12;
const NAME_SIZE = 13;
const LINE_SIZE = 11;
const LINE_HEIGHT = 16;
const HEADER = 40;
const LEGEND = 36;
const MARKS = 3;

/** How each kind of arrow looks, strongest first: a pair joined several ways is drawn as the first. */
const EDGE_STYLES: Record<EdgeKind, { colour: string; dash: string; width: number; label: string }> = {
  wire: { colour: INK, dash: '', width: 2.2, label: 'wire' },
  for_each: { colour: '#8250df', dash: '', width: 1.8, label: 'for_each items' },
  reference: { colour: '#818b98', dash: '', width: 1.3, label: 'reference' },
  condition: { colour: '#9a6700', dash: '3 3', width: 1.5, label: 'condition' },
  order: { colour: '#0969da', dash: '6 3', width: 1.5, label: 'runs after (data order)' },
};
const EDGE_ORDER: EdgeKind[] = ['wire', 'for_each', 'reference', 'condition', 'order'];

const LINE_COLOURS: Record<NodeLine['kind'], string> = {
  detail: MUTED,
  condition: '#9a6700',
  for_each: '#8250df',
  on_error: '#bc4c00',
  retry: MUTED,
};

/**
 * The workflow as an SVG picture: a box per step laid out in dependency order (top to bottom), the
 * workflow input and output as rounded boxes, wires, references, conditions, for_each sources and
 * orders (an `after` wire, a read after a write of the same entity) as arrows in their own styles, and each step's conditions, for_each, on_error and retry written in
 * its box. Every text is escaped; long texts are cut, with the whole text in a tooltip.
 * @example
 * ```ts
 * const svg = workflowGraphSvg(await engine.workflows.get('invoice'));
 * ```
 */
export function workflowGraphSvg(workflow: Workflow, options: WorkflowGraphOptions = {}): string {
  const { steps, wires } = (workflow ?? {}) as { steps?: unknown; wires?: unknown };
  if (
    typeof workflow !== 'object' ||
    workflow === null ||
    !Array.isArray(steps) ||
    steps.some((step) => typeof step !== 'object' || step === null) ||
    !(
      wires === undefined ||
      (Array.isArray(wires) && wires.every((w) => typeof w === 'object' && w !== null))
    )
  )
    throw new TypeError(
      `workflowGraphSvg needs a workflow (an object with a steps list and a wires list), got ${describeValue(workflow)}`,
    );
  if (options?.run !== undefined) checkRunRecord(options.run, 'workflowGraphSvg: options.run', true);
  const graph = workflowGraph(workflow);
  const shown = graph.nodes.map((node) => ({ ...node, lines: visibleLines(node.lines) }));
  const sizes = shown.map((node) => ({
    width: NODE_WIDTH,
    height: PAD * 2 + NAME_SIZE + 4 + (node.kind === 'step' ? node.lines.length : 1) * LINE_HEIGHT,
  }));
  const layout = layeredLayout(sizes, graph.edges);
  const statuses = new Map((options.run?.steps ?? []).map((s) => [s.name, s.status]));
  const kinds = EDGE_ORDER.filter((kind) => graph.edges.some((e) => e.kinds.includes(kind)));
  const title = `workflow ${workflow.name}`;
  const width = Math.max(layout.width, textWidth(title, 15) + 48, legendWidth(kinds) + 48);
  const height = HEADER + layout.height + (kinds.length > 0 ? LEGEND : 0);

  const edges = graph.edges.map((edge, e) => {
    const kind = EDGE_ORDER.find((k) => edge.kinds.includes(k))!;
    const style = EDGE_STYLES[kind];
    const tip = `${edge.kinds.join(', ')}: ${edge.details.join('; ')}`;
    const dash = style.dash ? ` stroke-dasharray="${style.dash}"` : '';
    return `<path class="edge edge-${kind}" d="${pathOf(layout.edges[e]!)}" fill="none" stroke="${style.colour}" stroke-width="${style.width}"${dash} marker-end="url(#sw-arrow-${kind})"><title>${escapeXml(tip)}</title></path>`;
  });
  const nodes = shown.map((node, v) => nodeSvg(node, layout.nodes[v]!, statuses.get(node.name)));
  return (
    svgOpen(width, height, title, 'stepwire-graph') +
    `<defs>${kinds.map(markerOf).join('')}</defs>` +
    textElement(title, 24, 28, { width: width - 48, size: 15, className: 'title', bold: true }) +
    `<g transform="translate(0 ${HEADER})">${edges.join('')}${nodes.join('')}</g>` +
    legendSvg(kinds, HEADER + layout.height + 8) +
    '</svg>\n'
  );
}

function visibleLines(lines: NodeLine[]): NodeLine[] {
  const [detail, ...marks] = lines;
  if (marks.length <= MARKS) return lines;
  const more = { text: `+${marks.length - MARKS + 1} more`, kind: 'detail' } as const;
  return [detail!, ...marks.slice(0, MARKS - 1), more];
}

function nodeSvg(node: GraphNode, at: PlacedNode, status: string | undefined): string {
  const { x, y, width, height } = at;
  const textWidthInBox = width - PAD * 2;
  const name = textElement(node.name, x + PAD, y + PAD + NAME_SIZE - 2, {
    width: textWidthInBox,
    size: NAME_SIZE,
    className: 'name',
    bold: true,
  });
  if (node.kind !== 'step') {
    const what = node.kind === 'input' ? 'workflow input' : 'workflow output';
    return (
      `<g class="${node.kind}">` +
      `<rect class="${node.kind}-shape" x="${num(x)}" y="${num(y)}" width="${width}" height="${height}" rx="${num(height / 2)}" fill="#f6f8fa" stroke="${MUTED}" stroke-width="1.2"/>` +
      name +
      textElement(what, x + PAD, y + PAD + NAME_SIZE + LINE_HEIGHT, {
        width: textWidthInBox,
        size: LINE_SIZE,
        className: 'detail',
        fill: MUTED,
      }) +
      '</g>'
    );
  }
  const stack = node.forEach
    ? `<rect class="stack" x="${num(x + 5)}" y="${num(y + 5)}" width="${width}" height="${height}" rx="6" fill="#fbefff" stroke="#8250df" stroke-width="1"/>`
    : '';
  const strip = status
    ? `<rect class="status" x="${num(x)}" y="${num(y)}" width="6" height="${height}" rx="3" fill="${STATUS_COLOURS[status] ?? MUTED}"><title>${escapeXml(status)}</title></rect>`
    : '';
  const lines = node.lines.map((line, i) =>
    textElement(line.text, x + PAD, y + PAD + NAME_SIZE + LINE_HEIGHT * (i + 1), {
      width: textWidthInBox,
      size: LINE_SIZE,
      className: `line line-${line.kind}`,
      fill: LINE_COLOURS[line.kind],
    }),
  );
  return (
    `<g class="step" data-type="${escapeXml(node.type ?? '')}"${status ? ` data-status="${escapeXml(status)}"` : ''}>` +
    stack +
    `<rect class="step-shape" x="${num(x)}" y="${num(y)}" width="${width}" height="${height}" rx="6" fill="#ffffff" stroke="${INK}" stroke-width="1.2"/>` +
    strip +
    name +
    lines.join('') +
    '</g>'
  );
}

/** A line through the points: straight down where it can, an S-curve where it moves sideways. */
function pathOf(points: Point[]): string {
  let d = `M${num(points[0]!.x)} ${num(points[0]!.y)}`;
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1]!, points[i]!];
    const middle = (a.y + b.y) / 2;
    d +=
      Math.abs(a.x - b.x) < 0.5
        ? ` L${num(b.x)} ${num(b.y)}`
        : ` C${num(a.x)} ${num(middle)} ${num(b.x)} ${num(middle)} ${num(b.x)} ${num(b.y)}`;
  }
  return d;
}

function markerOf(kind: EdgeKind): string {
  return `<marker id="sw-arrow-${kind}" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" fill="${EDGE_STYLES[kind].colour}"/></marker>`;
}

const LEGEND_ITEM = 34;

function legendWidth(kinds: EdgeKind[]): number {
  return kinds.reduce(
    (sum, kind) => sum + LEGEND_ITEM + textWidth(EDGE_STYLES[kind].label, LINE_SIZE) + 20,
    0,
  );
}

function legendSvg(kinds: EdgeKind[], top: number): string {
  if (kinds.length === 0) return '';
  let x = 24;
  const y = top + 14;
  const items = kinds.map((kind) => {
    const style = EDGE_STYLES[kind];
    const dash = style.dash ? ` stroke-dasharray="${style.dash}"` : '';
    const item =
      `<line x1="${x}" y1="${y}" x2="${x + 26}" y2="${y}" stroke="${style.colour}" stroke-width="${style.width}"${dash} marker-end="url(#sw-arrow-${kind})"/>` +
      textElement(style.label, x + LEGEND_ITEM, y + 4, {
        width: 200,
        size: LINE_SIZE,
        className: 'legend-label',
        fill: MUTED,
      });
    x += LEGEND_ITEM + textWidth(style.label, LINE_SIZE) + 20;
    return item;
  });
  return `<g class="legend">${items.join('')}</g>`;
}
