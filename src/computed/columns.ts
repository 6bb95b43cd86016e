/**
 * Computed columns (`formula`, `lookup`, `rollup`) and the stored part of an entity: what its sheet
 * holds and what writes take.
 * @module
 */
import type { Entity, EntityColumn } from '../schema/entity.js';

/** The kinds of computed column. */
export type ComputedKind = 'formula' | 'lookup' | 'rollup';

/** The kind of a computed column, or undefined for a stored one. */
export function computedKind(column: EntityColumn): ComputedKind | undefined {
  if (column.formula !== undefined) return 'formula';
  if (column.lookup !== undefined) return 'lookup';
  if (column.rollup !== undefined) return 'rollup';
  return undefined;
}

/** Whether an entity has a computed column. */
export function hasComputed(entity: Entity): boolean {
  return entity.columns.some((c) => computedKind(c) !== undefined);
}

const STORED = new WeakMap<Entity, Entity>();
const COMPUTED_OF = new WeakMap<Entity, ReadonlyMap<string, ComputedKind>>();

/**
 * The entity as its sheet holds it: without its computed columns. The same object for the same
 * definition (the sheet cache keeps a table for one definition object), the entity itself when it
 * has no computed column. @internal
 */
export function storedEntity(entity: Entity): Entity {
  if (!hasComputed(entity)) return entity;
  let stored = STORED.get(entity);
  if (stored) return stored;
  stored = { ...entity, columns: entity.columns.filter((c) => computedKind(c) === undefined) };
  STORED.set(entity, stored);
  COMPUTED_OF.set(
    stored,
    new Map(entity.columns.flatMap((c) => (computedKind(c) ? [[c.name, computedKind(c)!] as const] : []))),
  );
  return stored;
}

/** The computed columns (name to kind) left out of a stored entity made by {@link storedEntity}. @internal */
export function computedColumnsOf(stored: Entity): ReadonlyMap<string, ComputedKind> | undefined {
  return COMPUTED_OF.get(stored);
}

/**
 * An entity body (as written, not yet checked) without its computed columns, or the body itself
 * when it has none: what a project folder registers before its relationships exist. @internal
 */
export function withoutComputed(body: unknown): unknown {
  if (typeof body !== 'object' || body === null) return body;
  const columns = (body as { columns?: unknown }).columns;
  if (!Array.isArray(columns)) return body;
  const computed = (c: unknown) =>
    typeof c === 'object' && c !== null && ('formula' in c || 'lookup' in c || 'rollup' in c);
  if (!columns.some(computed)) return body;
  return { ...body, columns: columns.filter((c) => !computed(c)) };
}
