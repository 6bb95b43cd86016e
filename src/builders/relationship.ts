import { RelationshipSchema, parse, type Relationship } from '../schema/index.js';
import type { EntityBuilder } from './entity.js';

/** An entity given by name, by its definition, or by its builder. */
export type EntityRef =
  | string
  | { readonly name: string; readonly columns: ReadonlyArray<{ readonly name: string }> }
  | EntityBuilder<string, string>;

/** Column names of an entity reference: the declared union for definitions and builders, `string` for a bare name. */
export type ColumnsOf<E> =
  E extends EntityBuilder<string, infer C>
    ? C
    : E extends { readonly columns: ReadonlyArray<{ readonly name: infer C }> }
      ? C & string
      : string;

/** Name of an entity reference, as a literal type when known. */
export type EntityNameOf<E> = E extends string
  ? E
  : E extends { readonly name: infer N }
    ? N & string
    : string;

/**
 * A foreign key from `source` to `target`: the `source` columns hold values of the `target` columns.
 * When the entities are given as definitions or builders, the column names are checked at compile
 * time; tuple literals must also be of equal length.
 */
export interface ForeignKeyOptions<
  S extends EntityRef,
  T extends EntityRef,
  SC extends readonly ColumnsOf<S>[],
> {
  /** The entity holding the key (by name, definition or builder). */
  source: S;
  /** Columns of `source`, in order. */
  sourceColumns: SC;
  /** The entity the key points to. */
  target: T;
  /** Columns of `target`, matched one to one with `sourceColumns`. */
  targetColumns: { readonly [K in keyof SC]: ColumnsOf<T> };
  /**
   * Check every appended source row against the target.
   * @default false
   */
  enforce?: boolean;
}

/** A relationship definition whose entity names are known to the type checker. */
export type RelationshipDefinition<S extends string = string, T extends string = string> = Omit<
  Relationship,
  'source_entity' | 'target_entity'
> & {
  source_entity: S;
  target_entity: T;
};

/** Builds a relationship definition between two entities. */
export class RelationshipBuilder<S extends string = string, T extends string = string> {
  readonly #name: string;
  readonly #config: Relationship['foreign_key_config'] | undefined;
  readonly #source: string | undefined;
  readonly #target: string | undefined;

  /** @internal Use {@link relationship}. */
  constructor(name: string, source?: string, target?: string, config?: Relationship['foreign_key_config']) {
    this.#name = name;
    this.#source = source;
    this.#target = target;
    this.#config = config;
  }

  /** Makes this a `foreign_key` relationship from `source` columns to `target` columns. */
  foreignKey<
    const SE extends EntityRef,
    const TE extends EntityRef,
    const SC extends readonly [ColumnsOf<SE>, ...ColumnsOf<SE>[]],
  >(options: ForeignKeyOptions<SE, TE, SC>): RelationshipBuilder<EntityNameOf<SE>, EntityNameOf<TE>> {
    const config = {
      source_columns: [...options.sourceColumns] as string[],
      target_columns: [...(options.targetColumns as readonly string[])],
      enforce_foreign_key: options.enforce ?? false,
    };
    return new RelationshipBuilder(this.#name, nameOf(options.source), nameOf(options.target), config);
  }

  /**
   * Returns the plain relationship definition, validated.
   * @throws ValidationError listing every problem (for example column lists of unequal length).
   */
  build(): RelationshipDefinition<S, T> {
    const body: Record<string, unknown> = { name: this.#name, relationship_type: 'foreign_key' };
    if (this.#source !== undefined) body['source_entity'] = this.#source;
    if (this.#target !== undefined) body['target_entity'] = this.#target;
    if (this.#config !== undefined) body['foreign_key_config'] = this.#config;
    return parse(RelationshipSchema, body, `relationship "${this.#name}"`) as RelationshipDefinition<S, T>;
  }
}

function nameOf(ref: EntityRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}

/**
 * Starts a relationship definition between two entities.
 * @example
 * ```ts
 * const ordersCustomer = relationship('orders_customer')
 *   .foreignKey({ source: orders, sourceColumns: ['customer_id'], target: customers, targetColumns: ['id'] })
 *   .build();
 * ```
 */
export function relationship(name: string): RelationshipBuilder {
  return new RelationshipBuilder(name);
}
