/**
 * What the workflow graph shows, read from a definition: a node per step (and the input and output
 * when they are used), an edge per step that feeds another, by wire, reference, condition or
 * for_each. Fields newer than the picture (`for_each`, `on_error`) are read defensively.
 * @module
 */
import { STEP_RETRY_ATTEMPTS } from '../retry/index.js';
import { findReferences, parsePath, type Workflow } from '../schema/index.js';
import { ORDER_WIRE_TARGET, addDataOrder } from '../schema/data-order.js';

/** How one step feeds another. @internal */
export type EdgeKind = 'wire' | 'reference' | 'condition' | 'for_each' | 'order';

/** A line of a node: what it does, or a mark such as a condition. @internal */
export interface NodeLine {
  text: string;
  kind: 'detail' | 'condition' | 'for_each' | 'on_error' | 'retry';
}

/** A box of the graph. @internal */
export interface GraphNode {
  kind: 'input' | 'step' | 'output';
  /** The step name, or the input's or output's name. */
  name: string;
  /** The step type, for steps. */
  type?: string;
  lines: NodeLine[];
  /** The step runs once per item. */
  forEach: boolean;
}

/** An arrow: `from` feeds `to`. @internal */
export interface GraphEdge {
  from: number;
  to: number;
  /** Every way `from` feeds `to`, in the order found. */
  kinds: EdgeKind[];
  /** What the arrow carries, e.g. `orders.body.table → pdf`, for its tooltip. */
  details: string[];
}

/** The graph of a workflow: nodes in definition order (input first, output last). @internal */
export interface WorkflowGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** Reads the nodes and edges of `workflow`. Pure. @internal */
export function workflowGraph(workflow: Workflow): WorkflowGraph {
  const inputName = workflow.workflow_input?.name ?? 'input';
  const steps = workflow.steps as unknown as Record<string, unknown>[];
  const nodes: GraphNode[] = [{ kind: 'input', name: inputName, lines: [], forEach: false }];
  const index = new Map<string, number>([[inputName, 0]]);
  for (const step of steps) {
    index.set(String(step['name']), nodes.length);
    nodes.push(stepNode(step));
  }
  const edges = new Map<string, GraphEdge>();
  const connect = (root: string | undefined, to: number, kind: EdgeKind, detail: string) => {
    const from = root === undefined ? undefined : index.get(root);
    if (from === undefined || from === to) return;
    const key = `${from}>${to}`;
    const edge = edges.get(key) ?? { from, to, kinds: [], details: [] };
    edges.set(key, edge);
    if (!edge.kinds.includes(kind)) edge.kinds.push(kind);
    if (!edge.details.includes(detail)) edge.details.push(detail);
  };

  steps.forEach((step, i) => {
    const to = i + 1;
    const loop = step['for_each'] !== undefined && step['for_each'] !== null;
    for (const [key, value] of Object.entries(step)) {
      if (key === 'name' || key === 'type' || key === 'conditions') continue;
      const kind: EdgeKind = key === 'for_each' ? 'for_each' : 'reference';
      for (const text of stringsIn(value)) {
        for (const { expression } of findReferences(text)) {
          const root = rootOf(expression);
          // In a for_each step's data, item and item_index are the loop's, even beside a step of that name.
          if (loop && key !== 'for_each' && isLoopRoot(root)) continue;
          connect(root, to, kind, `{{${expression}}}`);
        }
      }
    }
    for (const condition of arrayOf(step['conditions'])) {
      const path = String((condition as { data_path?: unknown })?.data_path ?? '');
      const expression = path.trim().replace(/^\{\{\s*|\s*\}\}$/g, '');
      const root = rootOf(expression);
      if (loop && isLoopRoot(root)) continue;
      connect(root, to, 'condition', `if ${expression}`);
    }
  });
  for (const wire of workflow.wires) {
    const to = index.get(wire.target_name);
    if (to === undefined) continue;
    if (wire.target_data_path?.trim() === ORDER_WIRE_TARGET) {
      connect(wire.source_name, to, 'order', `after ${wire.source_name}`);
      continue;
    }
    const from = wire.source_data_path ? `${wire.source_name}.${wire.source_data_path}` : wire.source_name;
    const into = wire.target_data_path ? `${wire.target_name}.${wire.target_data_path}` : wire.target_name;
    connect(wire.source_name, to, 'wire', `${from} → ${into}`);
  }
  // Data order: a read of an entity after the writes of it listed before it (steps are nodes 1..n).
  const deps = steps.map(() => new Set<number>());
  for (const edge of edges.values())
    if (edge.from > 0 && edge.to <= steps.length) deps[edge.to - 1]!.add(edge.from - 1);
  for (const order of addDataOrder(workflow.steps, deps))
    connect(String(steps[order.from]!['name']), order.to + 1, 'order', `writes ${order.entity} first`);
  const output = workflow.workflow_output;
  if (output) {
    const to = nodes.length;
    nodes.push({ kind: 'output', name: output.name, lines: [], forEach: false });
    for (const text of stringsIn(output.output_data))
      for (const { expression } of findReferences(text))
        connect(rootOf(expression), to, 'reference', `{{${expression}}}`);
  }
  // The input shows only when something reads it.
  const usesInput = [...edges.values()].some((e) => e.from === 0);
  if (!usesInput) {
    nodes.shift();
    for (const edge of edges.values()) {
      edge.from -= 1;
      edge.to -= 1;
    }
  }
  return { nodes, edges: [...edges.values()] };
}

function stepNode(step: Record<string, unknown>): GraphNode {
  const type = String(step['type']);
  const lines: NodeLine[] = [{ text: stepDetail(step, type), kind: 'detail' }];
  for (const condition of arrayOf(step['conditions'])) {
    const { data_path, value, expression } = (condition ?? {}) as {
      data_path?: unknown;
      value?: unknown;
      expression?: unknown;
    };
    lines.push({
      text:
        typeof expression === 'string'
          ? `if ${expression}`
          : `if ${String(data_path)} = ${JSON.stringify(value) ?? 'null'}`,
      kind: 'condition',
    });
  }
  const forEach = step['for_each'];
  if (forEach !== undefined && forEach !== null) {
    const concurrency = typeof step['concurrency'] === 'number' ? `, ${step['concurrency']} at once` : '';
    lines.push({ text: `for each ${String(forEach)}${concurrency}`, kind: 'for_each' });
  }
  if (typeof step['on_error'] === 'string')
    lines.push({ text: `on error: ${step['on_error']}`, kind: 'on_error' });
  const retry = step['retry'] as { attempts?: unknown } | undefined;
  const attempts = retry && (retry.attempts ?? STEP_RETRY_ATTEMPTS);
  if (typeof attempts === 'number' && attempts > 1)
    lines.push({ text: `retry: ${attempts} attempts`, kind: 'retry' });
  return {
    kind: 'step',
    name: String(step['name']),
    type,
    lines,
    forEach: forEach !== undefined && forEach !== null,
  };
}

/** One line on what a step does: its action, its request, or its type. */
function stepDetail(step: Record<string, unknown>, type: string): string {
  const data = (step[`${type}_data`] ?? {}) as Record<string, unknown>;
  if (type === 'l2') {
    const action = `${String(data['provider'])}/${String(data['module'])}/${String(data['action'])}`;
    const child = (data['input_data'] as { workflow_name?: unknown } | undefined)?.workflow_name;
    // A child run says which workflow it runs.
    return action === 'platform/workflows/run_workflow' && typeof child === 'string'
      ? `runs workflow ${child}`
      : action;
  }
  if (type === 'request') return `${String(data['method'] ?? 'GET').toUpperCase()} ${String(data['url'])}`;
  if (type === 'atlas') {
    const script = (data['input_data'] as { code_file?: unknown } | undefined)?.code_file;
    return `atlas ${String(data['action'])}${typeof script === 'string' ? ` ${script}` : ''}`;
  }
  return type;
}

/** The step or input a reference starts at. */
function rootOf(expression: string): string | undefined {
  const parsed = parsePath(expression);
  const root = parsed.ok ? parsed.segments[0] : undefined;
  return typeof root === 'string' ? root : undefined;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Every string value inside a JSON value (references sit in values, not keys). */
function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsIn(item);
  else if (value !== null && typeof value === 'object')
    for (const item of Object.values(value)) yield* stringsIn(item);
}

/** `item` and `item_index`: in a `for_each` step's data and conditions, the loop's own (as the engine reads them). */
function isLoopRoot(root: string | undefined): boolean {
  return root === 'item' || root === 'item_index';
}
