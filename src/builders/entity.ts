import { ValidationError } from '../errors/index.js';
import { entityIssues } from '../computed/check.js';
import {
  EntitySchema,
  parse,
  type ColumnType,
  type Entity,
  type EntityCheck,
  type EntityColumn,
  type Lookup,
  type Rollup,
  type SpreadsheetConfig,
} from '../schema/index.js';

/** An entity definition whose name and column names are known to the type checker. */
export type EntityDefinition<Name extends string = string, Columns extends string = string> = Omit<
  Entity,
  'name' | 'columns' | 'primary_key'
> & {
  name: Name;
  columns: Array<Omit<EntityColumn, 'name'> & { name: Columns }>;
  primary_key: Columns[];
};

/** Where an entity's rows live, for {@link EntityBuilder.sheet}; `origin` defaults to `{ row: 0, col: 0 }` (cell A1). */
export interface SheetOptions {
  /** Identifier of the spreadsheet document. */
  spreadsheet_id: string;
  /** Name of the sheet inside it. */
  sheet_name: string;
  /**
   * Zero-based position of the header row's first cell.
   * @default { row: 0, col: 0 }
   */
  origin?: { row: number; col: number };
}

/** Column options copied into the column definition. */
const RULE_KEYS = ['number', 'required', 'enum', 'min_length', 'max_length', 'pattern', 'format'] as const;

/**
 * What a key guessed as a column option says: the primary key belongs to the entity, not to a
 * column.
 */
type KeyIsTheEntitys = 'not a column option: the primary key is set with .primaryKey(...columns)';

/** Options of {@link EntityBuilder.column}. */
export interface ColumnOptions {
  /** Rules of a `NUMBER` column's values, which every write keeps: `{ min: 0, step: 0.5 }`. */
  number?: EntityColumn['number'];
  /** Every written row must give the column a value. */
  required?: boolean;
  /** Written values must be one of these. */
  enum?: Array<string | number>;
  /** Shortest text allowed, in characters (`STRING` columns). */
  min_length?: number;
  /** Longest text allowed, in characters (`STRING` columns). */
  max_length?: number;
  /** A regular expression written text must match (`STRING` columns), run in linear time. */
  pattern?: string;
  /** A format written text must have: `email` or `url` (`STRING` columns). */
  format?: 'email' | 'url';
  /** Not an option: the primary key is the entity's, set with {@link EntityBuilder.primaryKey}. */
  primaryKey?: KeyIsTheEntitys;
  /** Not an option: the primary key is the entity's, set with {@link EntityBuilder.primaryKey}. */
  primary_key?: KeyIsTheEntitys;
  /** Not an option: the primary key is the entity's, set with {@link EntityBuilder.primaryKey}. */
  key?: KeyIsTheEntitys;
}

interface EntityState {
  readonly name: string;
  readonly description: string | undefined;
  readonly columns: ReadonlyArray<EntityColumn>;
  readonly primaryKey: readonly string[];
  readonly sheet: SpreadsheetConfig | undefined;
  readonly checks: readonly EntityCheck[];
}

/**
 * Builds an entity definition. Every method returns a new builder; the type remembers the
 * declared column names, so {@link EntityBuilder.primaryKey} accepts only those.
 */
export class EntityBuilder<Name extends string = string, Columns extends string = never> {
  readonly #state: EntityState;

  /** @internal Use {@link entity}. */
  constructor(state: EntityState) {
    this.#state = state;
  }

  /** The entity's name. */
  get name(): Name {
    return this.#state.name as Name;
  }

  /** Sets the free-text description. */
  description(text: string): EntityBuilder<Name, Columns> {
    return new EntityBuilder({ ...this.#state, description: text });
  }

  /**
   * Declares a column; its name becomes usable in {@link EntityBuilder.primaryKey} and relationships.
   * A `NUMBER` column may carry rules (`{ number: { min: 0, step: 0.5 } }`) that every write keeps.
   * The primary key is no column option (`{ primaryKey: true }` does not compile): it is the
   * entity's `primary_key`, set with {@link EntityBuilder.primaryKey}.
   */
  column<const C extends string>(
    name: C,
    type: ColumnType,
    rules: ColumnOptions = {},
  ): EntityBuilder<Name, Columns | C> {
    const column: EntityColumn = { name, type };
    for (const key of RULE_KEYS) if (rules[key] !== undefined) Object.assign(column, { [key]: rules[key] });
    return new EntityBuilder({ ...this.#state, columns: [...this.#state.columns, column] });
  }

  /**
   * Declares a computed column: the value of a CEL expression over the row's columns (read only; the
   * sheet needs no header for it). See docs/computed-columns.md for the functions it may call.
   * @example `.formula('total', 'NUMBER', 'price * qty')`
   */
  formula<const C extends string>(
    name: C,
    type: ColumnType,
    expression: string,
  ): EntityBuilder<Name, Columns | C> {
    return this.#computed({ name, type, formula: expression });
  }

  /**
   * Declares a computed column read through a foreign key: `column` of the row that `relationship`
   * (from this entity) points at.
   * @example `.lookup('customer_name', 'STRING', { relationship: 'orders_customer', column: 'name' })`
   */
  lookup<const C extends string>(
    name: C,
    type: ColumnType,
    lookup: Lookup,
  ): EntityBuilder<Name, Columns | C> {
    return this.#computed({ name, type, lookup: { ...lookup } });
  }

  /**
   * Declares a computed column summarizing the rows of another entity that point at this row through
   * `relationship`: `count`, or the `sum`, `min`, `max` or `avg` of `column`, over the rows matching `filters`.
   * @example `.rollup('order_total', 'NUMBER', { relationship: 'orders_customer', function: 'sum', column: 'amount' })`
   */
  rollup<const C extends string>(
    name: C,
    type: ColumnType,
    rollup: Rollup,
  ): EntityBuilder<Name, Columns | C> {
    return this.#computed({ name, type, rollup: { ...rollup } });
  }

  /** Adds a rule every written row must keep: a CEL expression over its stored columns, and what a refusal says. */
  check(expression: string, message: string): EntityBuilder<Name, Columns> {
    return new EntityBuilder({ ...this.#state, checks: [...this.#state.checks, { expression, message }] });
  }

  #computed<C extends string>(column: EntityColumn): EntityBuilder<Name, Columns | C> {
    return new EntityBuilder({ ...this.#state, columns: [...this.#state.columns, column] });
  }

  /** Sets the primary key: one or more declared column names. */
  primaryKey(...names: [Columns, ...Columns[]]): EntityBuilder<Name, Columns> {
    return new EntityBuilder({ ...this.#state, primaryKey: names });
  }

  /** Sets where the rows live: the spreadsheet, the sheet and the cell of the header row's first column. */
  sheet(options: SheetOptions): EntityBuilder<Name, Columns> {
    const origin = options.origin ?? { row: 0, col: 0 };
    const sheet = {
      spreadsheet_id: options.spreadsheet_id,
      sheet_name: options.sheet_name,
      origin: { row: origin.row, col: origin.col },
    };
    return new EntityBuilder({ ...this.#state, sheet });
  }

  /**
   * Returns the plain entity definition, validated.
   * @throws ValidationError listing every problem (for example a missing sheet or no columns).
   */
  build(): EntityDefinition<Name, Columns> {
    const { name, description, columns, primaryKey, sheet, checks } = this.#state;
    const body: Record<string, unknown> = { name };
    if (description !== undefined) body['description'] = description;
    body['columns'] = columns.map((c) => ({ ...c }));
    body['primary_key'] = [...primaryKey];
    if (sheet !== undefined) body['spreadsheet_config'] = sheet;
    if (checks.length > 0) body['checks'] = checks.map((c) => ({ ...c }));
    const entity = parse(EntitySchema, body, `entity "${name}"`);
    // Formulas, checks and rules are checked here too; lookups and rollups when it is registered.
    const issues = entityIssues(entity);
    if (issues.length > 0) throw new ValidationError(issues);
    return entity as EntityDefinition<Name, Columns>;
  }
}

/**
 * Starts an entity definition: typed columns, a primary key made of them, and the sheet
 * that holds the rows.
 * @example
 * ```ts
 * const customers = entity('customers')
 *   .description('People who order')
 *   .column('id', 'NUMBER')
 *   .column('name', 'STRING')
 *   .primaryKey('id')
 *   .sheet({ spreadsheet_id: 'sheet-1', sheet_name: 'Customers' })
 *   .build();
 * ```
 */
export function entity<const Name extends string>(name: Name): EntityBuilder<Name, never> {
  return new EntityBuilder({
    name,
    description: undefined,
    columns: [],
    primaryKey: [],
    sheet: undefined,
    checks: [],
  });
}
