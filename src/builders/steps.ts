import type { StepBaseBody, StepBody, StepBodyOf, WriteMode } from '../schema/index.js';
import type { ColumnsOf, EntityRef } from './relationship.js';

/** `l2_data` of a step, as written. */
export type L2DataBody = StepBodyOf<'l2'>['l2_data'];
/** `request_data` of a step, as written. */
export type RequestDataBody = StepBodyOf<'request'>['request_data'];
/** `atlas_data` of a step, as written. */
export type AtlasDataBody = StepBodyOf<'atlas'>['atlas_data'];

/** A step condition whose `data_path` is a reference path such as `input.amount` or `check.ok`. */
export interface StepCondition<P extends string = string> {
  /** Path of the value evaluated: `<input name>.<property>` or `<step>.<field>`. */
  data_path: P;
  /** Compared with JSON equality. */
  value: unknown;
}

/**
 * Options shared by every kind of step: the common step fields, with conditions typed by their paths.
 * `for_each` is set by `workflow(...).forEach(name, list, def)`, which also types the item's references.
 */
export interface StepOptions<P extends string = string> extends Omit<
  StepBaseBody,
  'name' | 'conditions' | 'for_each'
> {
  /** The step runs only when every condition holds. */
  conditions?: StepCondition<P>[];
}

/** One member of a union with keys left out. */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A string literal without the spaces at its ends. */
type Trimmed<S extends string> = S extends ` ${infer T}`
  ? Trimmed<T>
  : S extends `${infer T} `
    ? Trimmed<T>
    : S;

/** `S` when it is text the type checker knows (a literal), `never` for `string` or a pattern such as `${string}.id`. */
type Known<S extends string> = S extends string
  ? Record<never, never> extends Record<S, 1>
    ? never
    : S
  : never;

/** The paths of the `{{...}}` references in a string literal; none in text the type checker does not know. */
type RefsInText<S extends string> = S extends `${string}{{${infer R}}}${infer Rest}`
  ? Known<Trimmed<R>> | RefsInText<Rest>
  : never;

/**
 * The paths of the `{{...}}` references written in a value: in its string literals, and in the
 * arrays and objects around them (eight levels deep). A value typed only as `string`, `unknown` or
 * `any` has none the type checker can see.
 */
export type RefsIn<T, Depth extends 0[] = []> = 0 extends 1 & T
  ? never
  : Depth['length'] extends 8
    ? never
    : T extends string
      ? RefsInText<T>
      : T extends readonly (infer E)[]
        ? RefsIn<E, [...Depth, 0]>
        : T extends object
          ? { [K in keyof T]-?: RefsIn<T[K], [...Depth, 0]> }[keyof T]
          : never;

/**
 * `unknown` when the object type `T` has no key but `K`; otherwise a type that requires a property
 * named `What` holding the other keys, so a value of `T` given where this is intersected fails to
 * compile with an error naming them (what excess property checks would say, for a type parameter).
 */
type OnlyKeys<T, K extends PropertyKey, What extends string> = [Exclude<keyof T, K>] extends [never]
  ? unknown
  : { [P in What]: Exclude<keyof T, K> };

/** {@link OnlyKeys} for each row of `Rows`: a row naming a column `C` lacks fails to compile. */
type OnlyColumns<Rows, C extends string> = Rows extends readonly (infer Row)[]
  ? OnlyKeys<Row, C, 'not a column'>
  : unknown;

/**
 * A step without its name: what the step helpers return and `workflow(...).step(name, def)` takes.
 * It is one of the step types, with its `type` and its own data block.
 *
 * `R` is the paths of the references written in its data, as the helpers found them (`l2`,
 * `getEntity`, `request`...): `workflow(...).step()` takes the step only when each names a step
 * added before it or the input, so `{{raed.body.table}}` does not compile where `read` was meant.
 */
export type StepDef<P extends string = string, R extends string = P> = StepOptions<P> &
  OmitEach<StepBody, keyof StepBaseBody> & {
    /** Type-only: the references the step's data holds (see {@link RefsIn}); never set. */
    readonly '~refs'?: R;
  };

/** The read operation of an entity (as `get_entity` takes it) with column names checked when the entity's columns are known. */
export interface EntityOperation<C extends string = string> {
  /** Columns returned, optionally renamed. */
  select_columns?: ReadonlyArray<{ column: C; alias?: string }>;
  /** Filters, joined by AND; a `value` may be a reference such as `{{input.id}}`. */
  filters?: ReadonlyArray<{
    column: C;
    operator: FilterOperatorName;
    value_type?: 'NUMBER' | 'STRING' | 'BOOLEAN';
    value?: unknown;
  }>;
  /**
   * Sort keys, applied in order. With `group_by`, a group column (to sort by an aggregate's alias,
   * name the entity by its name, whose columns are not checked).
   */
  order_by?: ReadonlyArray<{ column: C; direction: 'ASC' | 'DESC' }>;
  /** Columns whose values make the groups: one row per group (after the filters). */
  group_by?: ReadonlyArray<C>;
  /** Values computed per group (over all filtered rows without `group_by`), each under its alias. */
  aggregates?: ReadonlyArray<{
    function: 'count' | 'sum' | 'min' | 'max' | 'avg';
    column?: C;
    alias: string;
  }>;
}

/** A filter operator of the entity read. */
export type FilterOperatorName = NonNullable<EntityOperationBody['filters']>[number]['operator'];
type EntityOperationBody = NonNullable<NonNullable<AtlasDataBody['input_data']>['operation']>;

/** Paging of an entity read: `page_number` starts at 1. */
export interface Paging {
  /** Rows per page. */
  page_size?: number;
  /** Page to return, from 1. */
  page_number?: number;
}

/**
 * An `l2` step: the named action of a provider and module.
 * @example
 * ```ts
 * l2('chat', 'bot', 'send_message', { channel: 'sales', message: 'New order {{input.id}}' })
 * ```
 */
export function l2<const I extends Record<string, unknown> = Record<string, never>>(
  provider: string,
  module: string,
  action: string,
  input_data: I = {} as I,
): StepDef<never, RefsIn<I>> {
  return { type: 'l2', l2_data: { provider, module, action, input_data } };
}

/**
 * An `l2` step running `platform/workflows/run_workflow`: the workflow `workflowName` as a child run,
 * whose output becomes the step's output.
 * @example
 * ```ts
 * runWorkflow('invoice', { customer_id: '{{input.customer_id}}' })
 * ```
 */
export function runWorkflow<const I extends Record<string, unknown> = Record<string, never>>(
  workflowName: string,
  input: I = {} as I,
): StepDef<never, RefsIn<I>> {
  return l2('platform', 'workflows', 'run_workflow', { workflow_name: workflowName, input: input as object });
}

/**
 * An `l2` step running the entity read `catalog/action/get_entity`. Its output is
 * `{ body: { table, error } }`.
 * @example
 * ```ts
 * getEntity(customers, { filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: '{{input.id}}' }] })
 * ```
 */
export function getEntity<
  const E extends EntityRef,
  const O extends EntityOperation<ColumnsOf<E>> = Record<string, never>,
>(
  entity: E,
  operation?: O & OnlyKeys<O, keyof EntityOperation, 'not an operation key'>,
  paging: Paging = {},
): StepDef<never, RefsIn<O>> {
  const input_data = { entity_name: nameOf(entity), operation: operation ?? {}, ...paging };
  return {
    type: 'l2',
    l2_data: { provider: 'catalog', module: 'action', action: 'get_entity', input_data, metadata: {} },
  };
}

/**
 * An `l2` step running `catalog/action/write_entity`: writes rows to an entity in a write mode
 * (`delete` takes keys). `rows` may be a reference such as `{{read.body.table}}`. Its output is
 * `{ written }`.
 * @example
 * ```ts
 * writeEntity('invoices', 'update', [{ id: '{{input.id}}', status: 'sent' }])
 * ```
 */
export function writeEntity<
  const E extends EntityRef,
  const Rows extends ReadonlyArray<Partial<Record<ColumnsOf<E>, unknown>>> | `{{${string}}}`,
>(
  entity: E,
  write_mode: WriteMode,
  rows: Rows & OnlyColumns<Rows, ColumnsOf<E>>,
): StepDef<never, RefsIn<Rows>> {
  const input_data = { entity_name: nameOf(entity), write_mode, rows };
  return {
    type: 'l2',
    l2_data: { provider: 'catalog', module: 'action', action: 'write_entity', input_data, metadata: {} },
  };
}

/**
 * An `atlas` `get` step: reads one entity; later steps use `{{<step>.table}}`.
 * @example
 * ```ts
 * atlasGet('orders', { order_by: [{ column: 'total', direction: 'DESC' }] }, { page_size: 10 })
 * ```
 */
export function atlasGet<
  const E extends EntityRef,
  const O extends EntityOperation<ColumnsOf<E>> = Record<string, never>,
>(
  entity: E,
  operation?: O & OnlyKeys<O, keyof EntityOperation, 'not an operation key'>,
  paging: Paging = {},
): StepDef<never, RefsIn<O>> {
  return {
    type: 'atlas',
    atlas_data: {
      action: 'get',
      input_data: { operation: (operation ?? {}) as EntityOperation as EntityOperationBody, ...paging },
      input_entities: [{ name: nameOf(entity) }],
    },
  };
}

/** Options of {@link transform}. */
export interface TransformOptions {
  /** Name of the stored script that runs. */
  code_file: string;
  /** Entities the script reads with `getEntity(name)`: names, definitions, builders, or `{{...}}` references. */
  inputs: readonly EntityRef[];
  /** Entities the script writes with `writeEntity(name, rows)`; a name means `write_mode: 'append'`. */
  outputs: ReadonlyArray<EntityRef | { name: string; write_mode: WriteMode }>;
}

/**
 * An `atlas` `transform` step: runs a JavaScript script over input entities and writes its
 * result to output entities.
 * @example
 * ```ts
 * transform({ code_file: 'totals.js', inputs: ['orders'], outputs: ['order_totals'] })
 * ```
 */
export function transform<const O extends TransformOptions>(options: O): StepDef<never, RefsIn<O['inputs']>> {
  const input_entities = options.inputs.map((ref) => {
    const name = nameOf(ref);
    return name.startsWith('{{') ? name : { name };
  });
  const output_entities = options.outputs.map((out) =>
    typeof out !== 'string' && 'write_mode' in out
      ? { name: out.name, write_mode: out.write_mode }
      : { name: nameOf(out), write_mode: 'append' as const },
  );
  return {
    type: 'atlas',
    atlas_data: {
      action: 'transform',
      input_data: { language: 'javascript', code_file: options.code_file },
      input_entities,
      output_entities,
    },
  };
}

/** `wait_data` of a `wait` step as written. */
export type WaitDataBody = StepBodyOf<'wait'>['wait_data'];

/**
 * A `wait` step: the run waits, holding no worker, for people's approval, an outside event or a
 * time; `{{...}}` references may appear in its values (a title, an event's `match`, `until`).
 * @example
 * ```ts
 * wait({ kind: 'approval', title: 'Send invoice {{input.id}}?', assignees: { roles: ['manager'] } })
 * wait({ kind: 'event', event: 'payment.received', match: { order: '{{input.order}}' }, timeout_seconds: 86400 })
 * wait({ kind: 'timer', seconds: 3600 })
 * ```
 */
export function wait<const D extends WaitDataBody>(wait_data: D): StepDef<never, RefsIn<D>> {
  return { type: 'wait', wait_data: { ...wait_data } as WaitDataBody };
}

/**
 * A `request` step: an HTTP request; `{{...}}` references may appear in every value.
 * @example
 * ```ts
 * request({ url: 'https://api.example.com/rates/{currency}', method: 'GET', path_params: { currency: '{{input.currency}}' } })
 * ```
 */
export function request<const D extends RequestDataBody>(request_data: D): StepDef<never, RefsIn<D>> {
  return { type: 'request', request_data: { ...request_data } as RequestDataBody };
}

function nameOf(ref: EntityRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}
