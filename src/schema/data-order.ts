/**
 * Data order: a step that reads an entity runs after every step listed before it that writes that
 * entity, as if wired with `after`, so a read never sees the rows from before a write the workflow
 * lists first. Pure over a definition: the planner and the graph both use it.
 * @module
 */
import type { Workflow } from './workflow.js';

/** The wire target that orders two steps without moving data: `{ target_data_path: "after" }`. */
export const ORDER_WIRE_TARGET = 'after';

/** One order the data adds: step `from` (a writer) runs before step `to` (a reader) of `entity`. */
export interface DataOrderEdge {
  /** Index of the step that writes the entity. */
  from: number;
  /** Index of the later-listed step that reads it. */
  to: number;
  /** The entity both name. */
  entity: string;
}

/** The entities a step reads and writes by plain name (names given by reference are not known). */
export function entityAccess(step: Workflow['steps'][number]): { reads: string[]; writes: string[] } {
  const reads: string[] = [];
  const writes: string[] = [];
  const plain = (name: unknown, into: string[]) => {
    if (typeof name === 'string' && name !== '' && !name.includes('{{')) into.push(name);
  };
  if (step.type === 'atlas') {
    for (const input of step.atlas_data.input_entities ?? [])
      plain(typeof input === 'string' ? input : input.name, reads);
    for (const output of step.atlas_data.output_entities ?? []) plain(output.name, writes);
  } else if (step.type === 'l2' && step.l2_data.provider === 'catalog' && step.l2_data.module === 'action') {
    const name = (step.l2_data.input_data as { entity_name?: unknown } | undefined)?.entity_name;
    if (step.l2_data.action === 'get_entity') plain(name, reads);
    if (step.l2_data.action === 'write_entity') plain(name, writes);
  }
  return { reads, writes };
}

/**
 * The orders the data adds to `deps` (each step's own dependencies, by index): for each step that
 * reads an entity, every step listed before it that writes that entity, unless that writer already
 * waits for the reader (then the workflow's own references decide, and no cycle is made). Each
 * edge is also added to `deps`, so later edges see it.
 */
export function addDataOrder(steps: Workflow['steps'], deps: Set<number>[]): DataOrderEdge[] {
  const access = steps.map(entityAccess);
  const edges: DataOrderEdge[] = [];
  for (let to = 0; to < steps.length; to++) {
    for (const entity of new Set(access[to]!.reads)) {
      for (let from = 0; from < to; from++) {
        if (!access[from]!.writes.includes(entity) || deps[to]!.has(from)) continue;
        if (waitsFor(from, to, deps)) continue;
        deps[to]!.add(from);
        edges.push({ from, to, entity });
      }
    }
  }
  return edges;
}

/** Whether step `a` waits, directly or through others, for step `b`. */
function waitsFor(a: number, b: number, deps: Set<number>[]): boolean {
  const seen = new Set<number>();
  const stack = [a];
  while (stack.length > 0) {
    const at = stack.pop()!;
    for (const d of deps[at] ?? []) {
      if (d === b) return true;
      if (!seen.has(d)) {
        seen.add(d);
        stack.push(d);
      }
    }
  }
  return false;
}
