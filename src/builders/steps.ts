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

/**
 * A step without its name: what the step helpers return and `workflow(...).step(name, def)` takes.
 * It is one of the step types, with its `type` and its own data block.
 */
export type StepDef<P extends string = string> = StepOptions<P> & OmitEach<StepBody, keyof StepBaseBody>;

/** The read operation of an entity (as `get_entity` takes it) with column names checked when the entity's columns are known. */
export interface EntityOperation<C extends string = string> {
  /** Columns returned, optionally renamed. */
  select_columns?: Array<{ column: C; alias?: string }>;
  /** Filters, joined by AND. */
  filters?: Array<{
    column: C;
    operator: FilterOperatorName;
    value_type?: 'NUMBER' | 'STRING' | 'BOOLEAN';
    value?: unknown;
  }>;
  /** Sort keys, applied in order. */
  order_by?: Array<{ column: C; direction: 'ASC' | 'DESC' }>;
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
export function l2(
  provider: string,
  module: string,
  action: string,
  input_data: Record<string, unknown> = {},
): StepDef<never> {
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
export function runWorkflow(workflowName: string, input: Record<string, unknown> = {}): StepDef<never> {
  return l2('platform', 'workflows', 'run_workflow', { workflow_name: workflowName, input });
}

/**
 * An `l2` step running the entity read `catalog/action/get_entity`. Its output is
 * `{ body: { table, error } }`.
 * @example
 * ```ts
 * getEntity(customers, { filters: [{ column: 'id', operator: 'EQUALS', value_type: 'NUMBER', value: '{{input.id}}' }] })
 * ```
 */
export function getEntity<const E extends EntityRef>(
  entity: E,
  operation: EntityOperation<ColumnsOf<E>> = {},
  paging: Paging = {},
): StepDef<never> {
  const input_data = { entity_name: nameOf(entity), operation, ...paging };
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
export function writeEntity<const E extends EntityRef>(
  entity: E,
  write_mode: WriteMode,
  rows: ReadonlyArray<Partial<Record<ColumnsOf<E>, unknown>>> | `{{${string}}}`,
): StepDef<never> {
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
export function atlasGet<const E extends EntityRef>(
  entity: E,
  operation: EntityOperation<ColumnsOf<E>> = {},
  paging: Paging = {},
): StepDef<never> {
  return {
    type: 'atlas',
    atlas_data: {
      action: 'get',
      input_data: { operation, ...paging },
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
export function transform(options: TransformOptions): StepDef<never> {
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

/**
 * A `request` step: an HTTP request; `{{...}}` references may appear in every value.
 * @example
 * ```ts
 * request({ url: 'https://api.example.com/rates/{currency}', method: 'GET', path_params: { currency: '{{input.currency}}' } })
 * ```
 */
export function request(request_data: RequestDataBody): StepDef<never> {
  return { type: 'request', request_data: { ...request_data } };
}

function nameOf(ref: EntityRef): string {
  return typeof ref === 'string' ? ref : ref.name;
}
