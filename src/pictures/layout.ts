/**
 * A small layered layout of a directed acyclic graph, top to bottom (the Sugiyama method): layers by
 * longest path, long edges broken into bends so they pass between boxes, an order in each layer that
 * keeps crossings few, and x positions pulled towards the boxes each one is joined to.
 * @module
 */

/** A point of the picture. @internal */
export interface Point {
  x: number;
  y: number;
}

/** Where a box goes: its top-left corner and size. @internal */
export interface PlacedNode {
  x: number;
  y: number;
  width: number;
  height: number;
  layer: number;
}

/** A laid-out graph. @internal */
export interface Layout {
  nodes: PlacedNode[];
  /** For each edge, the points its line goes through: out of the source's bottom, into the target's top. */
  edges: Point[][];
  width: number;
  height: number;
}

const MARGIN = 24;
const LAYER_GAP = 56;
const NODE_GAP = 28;
/** Room beside a bend (a long edge passing a layer). */
const BEND_GAP = 14;
/**
 * Bends drawn at most: past this many, the longest edges run straight from box to box, so the layout of
 * a large graph (every step of a long chain reading the input makes n^2 / 2 bends) stays quick.
 */
const MAX_BENDS = 20_000;
const ORDER_SWEEPS = 12;
const PLACE_SWEEPS = 16;

/** Lays out boxes of the given sizes joined by `edges` (from, to: indexes; the graph has no cycle). @internal */
export function layeredLayout(
  sizes: readonly { width: number; height: number }[],
  edges: readonly { from: number; to: number }[],
): Layout {
  const layer = layersOf(sizes.length, edges);
  // Virtual graph: the boxes, then one bend per layer a long edge passes.
  const width = sizes.map((s) => s.width);
  const up: number[][] = sizes.map(() => []);
  const down: number[][] = sizes.map(() => []);
  const bent = bentEdges(edges, layer);
  const chains = edges.map(({ from, to }, e) => {
    const chain = [from];
    for (let l = layer[from]! + 1; bent[e] && l < layer[to]!; l++) {
      const bend = width.length;
      width.push(0);
      layer.push(l);
      up.push([]);
      down.push([]);
      chain.push(bend);
    }
    chain.push(to);
    for (let i = 1; i < chain.length; i++) {
      down[chain[i - 1]!]!.push(chain[i]!);
      up[chain[i]!]!.push(chain[i - 1]!);
    }
    return chain;
  });
  const depth = largest(layer) + 1;
  const rows = orderRows(layer, depth, up, down);
  const x = placeRows(rows, width, up, down, sizes.length);
  straighten(chains, rows, layer, x, width);

  const heights = rows.map((row) => largest(row.map((v) => (v < sizes.length ? sizes[v]!.height : 0))));
  const tops: number[] = [];
  for (let l = 0, y = MARGIN; l < depth; l++) {
    tops.push(y);
    y += heights[l]! + LAYER_GAP;
  }
  const nodes = sizes.map((size, v) => ({
    x: x[v]! - size.width / 2,
    y: tops[layer[v]!]! + (heights[layer[v]!]! - size.height) / 2,
    width: size.width,
    height: size.height,
    layer: layer[v]!,
  }));
  const ports = portOffsets(chains, x, nodes);
  const lines = chains.map((chain, e) => {
    const [from, to] = [chain[0]!, chain.at(-1)!];
    const points: Point[] = [{ x: x[from]! + ports.out[e]!, y: nodes[from]!.y + nodes[from]!.height }];
    for (const bend of chain.slice(1, -1)) {
      const l = layer[bend]!;
      // Straight down through a layer, so the edge never cuts a box beside it.
      points.push({ x: x[bend]!, y: tops[l]! }, { x: x[bend]!, y: tops[l]! + heights[l]! });
    }
    points.push({ x: x[to]! + ports.in[e]!, y: nodes[to]!.y });
    return points;
  });
  const right = Math.max(largest(nodes.map((n) => n.x + n.width)), largest(x));
  const bottom = depth === 0 ? 0 : tops[depth - 1]! + heights[depth - 1]!;
  return { nodes, edges: lines, width: right + MARGIN, height: bottom + MARGIN };
}

/** Which edges get their bends: all of them, or the shortest while the total stays within {@link MAX_BENDS}. */
function bentEdges(edges: readonly { from: number; to: number }[], layer: readonly number[]): boolean[] {
  const span = edges.map(({ from, to }) => Math.max(0, layer[to]! - layer[from]! - 1));
  if (span.reduce((sum, n) => sum + n, 0) <= MAX_BENDS) return edges.map(() => true);
  const bent = edges.map(() => false);
  let left = MAX_BENDS;
  for (const e of [...edges.keys()].sort((a, b) => span[a]! - span[b]!)) {
    if (span[e]! > left) break;
    bent[e] = true;
    left -= span[e]!;
  }
  return bent;
}

/** The largest of `values`, 0 when there are none (a loop: a spread of a large graph's arrays overflows the stack). */
function largest(values: readonly number[]): number {
  let max = 0;
  for (const value of values) if (value > max) max = value;
  return max;
}

/** Each node's layer: one below the lowest node feeding it. */
function layersOf(count: number, edges: readonly { from: number; to: number }[]): number[] {
  const layer = new Array<number>(count).fill(0);
  const waiting = new Array<number>(count).fill(0);
  const next: number[][] = Array.from({ length: count }, () => []);
  for (const { from, to } of edges) {
    waiting[to]! += 1;
    next[from]!.push(to);
  }
  const ready = [...waiting.keys()].filter((v) => waiting[v] === 0);
  const done = new Set<number>();
  while (ready.length > 0) {
    const v = ready.shift()!;
    done.add(v);
    for (const w of next[v]!) {
      layer[w] = Math.max(layer[w]!, layer[v]! + 1);
      if (--waiting[w]! === 0) ready.push(w);
    }
  }
  // A cycle (never in a valid workflow) still gets drawn: its nodes go below everything else.
  let below = largest(layer);
  for (let v = 0; v < count; v++) if (!done.has(v)) layer[v] = ++below;
  return layer;
}

/** The nodes of each layer, ordered to keep crossings few (barycenter sweeps, best kept). */
function orderRows(layer: number[], depth: number, up: number[][], down: number[][]): number[][] {
  let rows: number[][] = Array.from({ length: depth }, () => []);
  layer.forEach((l, v) => rows[l]!.push(v));
  const position = new Array<number>(layer.length).fill(0);
  const index = () => rows.forEach((row) => row.forEach((v, i) => (position[v] = i)));
  index();
  let best = rows.map((row) => [...row]);
  let fewest = crossings(rows, down, position);
  for (let sweep = 0; sweep < ORDER_SWEEPS && fewest > 0; sweep++) {
    const downward = sweep % 2 === 0;
    const order = downward ? [...rows.keys()].slice(1) : [...rows.keys()].reverse().slice(1);
    for (const l of order) {
      const key = (v: number) => {
        const near = downward ? up[v]! : down[v]!;
        return near.length === 0
          ? position[v]!
          : near.reduce((sum, w) => sum + position[w]!, 0) / near.length;
      };
      const keys = new Map(rows[l]!.map((v) => [v, key(v)]));
      rows[l]!.sort((a, b) => keys.get(a)! - keys.get(b)! || position[a]! - position[b]!);
      rows[l]!.forEach((v, i) => (position[v] = i));
    }
    const count = crossings(rows, down, position);
    if (count < fewest) {
      fewest = count;
      best = rows.map((row) => [...row]);
    }
  }
  rows = best;
  return rows;
}

/**
 * How many pairs of edges cross between each layer and the next: edges whose ends are in opposite
 * orders (edges sharing an end never cross). O(E log E) per layer. @internal
 */
export function crossings(rows: number[][], down: number[][], position: number[]): number {
  let count = 0;
  for (const row of rows) {
    // Two edges cross when their ends are in opposite orders: the inversions of the lower ends once
    // the edges are sorted by their upper ends (then lower ends, so edges sharing an end never count).
    const edges = row.flatMap((v) => down[v]!.map((w) => [position[v]!, position[w]!] as const));
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    count += inversions(edges.map((edge) => edge[1]));
  }
  return count;
}

/** Pairs i < j with `values[i] > values[j]`, by merge sort: O(n log n). */
function inversions(values: number[]): number {
  if (values.length < 2) return 0;
  const buffer = new Array<number>(values.length);
  let count = 0;
  for (let width = 1; width < values.length; width *= 2) {
    for (let low = 0; low < values.length; low += 2 * width) {
      const middle = Math.min(low + width, values.length);
      const high = Math.min(low + 2 * width, values.length);
      let i = low;
      let j = middle;
      let k = low;
      while (i < middle && j < high) {
        if (values[j]! < values[i]!) {
          count += middle - i;
          buffer[k++] = values[j++]!;
        } else buffer[k++] = values[i++]!;
      }
      while (i < middle) buffer[k++] = values[i++]!;
      while (j < high) buffer[k++] = values[j++]!;
    }
    for (let n = 0; n < values.length; n++) values[n] = buffer[n]!;
  }
  return count;
}

/** x centre of every node: packed rows, then pulled towards their neighbours in sweeps. */
function placeRows(
  rows: number[][],
  width: number[],
  up: number[][],
  down: number[][],
  real: number,
): number[] {
  const x = new Array<number>(width.length).fill(0);
  const gap = (a: number, b: number) => (a < real && b < real ? NODE_GAP : BEND_GAP);
  const separation = (row: number[], i: number) =>
    (width[row[i - 1]!]! + width[row[i]!]!) / 2 + gap(row[i - 1]!, row[i]!);
  for (const row of rows) row.forEach((v, i) => (x[v] = i === 0 ? 0 : x[row[i - 1]!]! + separation(row, i)));
  for (let sweep = 0; sweep < PLACE_SWEEPS; sweep++) {
    const downward = sweep % 2 === 0;
    const order = downward ? [...rows.keys()] : [...rows.keys()].reverse();
    for (const l of order) {
      const row = rows[l]!;
      const desired = row.map((v) => {
        // Bends always look both ways, so a long edge runs straight; boxes look both ways later on.
        const both = v >= real || sweep >= PLACE_SWEEPS / 2;
        const near = [...(downward ? up[v]! : down[v]!), ...(both ? (downward ? down[v]! : up[v]!) : [])];
        return near.length === 0 ? x[v]! : near.reduce((sum, w) => sum + x[w]!, 0) / near.length;
      });
      const placed = closestInOrder(desired, (i) => separation(row, i));
      row.forEach((v, i) => (x[v] = placed[i]!));
    }
  }
  let left = 0;
  for (const row of rows) for (const v of row) left = Math.min(left, x[v]! - width[v]! / 2);
  return x.map((value) => value - left + MARGIN);
}

/**
 * Lines up the bends of each long edge on one x (the source's, the target's or their mean, the first
 * that fits between the neighbours of every bend), so the edge runs straight down between boxes.
 */
function straighten(
  chains: number[][],
  rows: number[][],
  layer: number[],
  x: number[],
  width: number[],
): void {
  const position = new Map<number, number>();
  rows.forEach((row) => row.forEach((v, i) => position.set(v, i)));
  const fits = (bend: number, at: number) => {
    const row = rows[layer[bend]!]!;
    const i = position.get(bend)!;
    const [left, right] = [row[i - 1], row[i + 1]];
    return (
      (left === undefined || x[left]! + width[left]! / 2 + BEND_GAP <= at) &&
      (right === undefined || x[right]! - width[right]! / 2 - BEND_GAP >= at)
    );
  };
  // Both ways round: an edge may only move once the one beside it has moved.
  for (const chain of [...chains, ...[...chains].reverse()]) {
    const bends = chain.slice(1, -1);
    if (bends.length === 0) continue;
    const mean = bends.reduce((sum, v) => sum + x[v]!, 0) / bends.length;
    const near = [x[chain[0]!]!, x[chain.at(-1)!]!, mean, ...bends.map((v) => x[v]!)];
    // Beside another straightened edge: a few steps to either side.
    for (let step = 1; step <= 6; step++) near.push(near[0]! + step * BEND_GAP, near[0]! - step * BEND_GAP);
    const at = near.find((c) => bends.every((v) => fits(v, c)));
    if (at !== undefined) for (const v of bends) x[v] = at;
  }
}

/**
 * Positions as near `desired` as possible (least squares) that keep their order and at least
 * `separation(i)` between item i-1 and i: pool-adjacent-violators over the shifted targets.
 */
function closestInOrder(desired: number[], separation: (i: number) => number): number[] {
  const offset = desired.map(() => 0);
  for (let i = 1; i < desired.length; i++) offset[i] = offset[i - 1]! + separation(i);
  const blocks: { sum: number; count: number }[] = [];
  for (let i = 0; i < desired.length; i++) {
    blocks.push({ sum: desired[i]! - offset[i]!, count: 1 });
    while (blocks.length > 1) {
      const [a, b] = [blocks.at(-2)!, blocks.at(-1)!];
      if (a.sum / a.count <= b.sum / b.count) break;
      blocks.splice(-2, 2, { sum: a.sum + b.sum, count: a.count + b.count });
    }
  }
  const placed: number[] = [];
  for (const block of blocks) for (let k = 0; k < block.count; k++) placed.push(block.sum / block.count);
  return placed.map((value, i) => value + offset[i]!);
}

/** Where each edge leaves and enters its boxes, relative to their centres: spread, in order of direction. */
function portOffsets(chains: number[][], x: number[], nodes: PlacedNode[]): { out: number[]; in: number[] } {
  const out = chains.map(() => 0);
  const into = chains.map(() => 0);
  const spread = (ends: Map<number, { edge: number; toward: number }[]>, target: number[]) => {
    for (const [node, list] of ends) {
      list.sort((a, b) => a.toward - b.toward);
      const room = nodes[node]!.width * 0.6;
      list.forEach(
        ({ edge }, k) => (target[edge] = list.length === 1 ? 0 : -room / 2 + (room * k) / (list.length - 1)),
      );
    }
  };
  const outgoing = new Map<number, { edge: number; toward: number }[]>();
  const incoming = new Map<number, { edge: number; toward: number }[]>();
  chains.forEach((chain, edge) => {
    const [from, to] = [chain[0]!, chain.at(-1)!];
    (outgoing.get(from) ?? outgoing.set(from, []).get(from)!).push({ edge, toward: x[chain[1]!]! });
    (incoming.get(to) ?? incoming.set(to, []).get(to)!).push({ edge, toward: x[chain.at(-2)!]! });
  });
  spread(outgoing, out);
  spread(incoming, into);
  return { out, in: into };
}
