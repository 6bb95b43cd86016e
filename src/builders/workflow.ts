import { WorkflowSchema, parse, type Workflow } from '../schema/index.js';
import type { FromJsonSchema, JsonSchemaLiteral } from './json-schema-types.js';
import type { RefsIn, StepCondition, StepDef } from './steps.js';

type PathOf<Root extends string> = Root | `${Root}.${string}` | `${Root}[${number}]${string}`;
type InputPathOf<N extends string, I> = unknown extends I
  ? PathOf<N>
  : I extends object
    ? N | PathOf<`${N}.${keyof I & string}`>
    : PathOf<N>;

/** Paths into the output of a `for_each` step: `{ items, succeeded, failed, skipped }` (or its `error`). */
type EachPathOf<E extends string> =
  | E
  | `${E}.${'succeeded' | 'failed' | 'skipped' | 'items' | 'items.length'}`
  | `${E}.items[${number}]${string}`
  | `${E}.error${'' | '.code' | '.message'}`;

/**
 * Paths a reference may take in a workflow: a declared step (`step`, `step.field`, `step.rows[0]`), a
 * `for_each` step's counts and items (`each.succeeded`, `each.items[0].field`), or the workflow input
 * (`input.<property>`, checked against the inferred input type when it is declared).
 */
export type RefPath<Steps extends string, InputName extends string, Input, Each extends string = never> =
  PathOf<Exclude<Steps, Each>> | EachPathOf<Each> | InputPathOf<InputName, Input>;

/** A secret, resolved at execution: only a step's own data may name one (`secrets.API_KEY`). */
export type SecretPath = `secrets.${string}`;

/** Paths naming the current item of a `for_each` step (`item.customer_id`) and its index (`item_index`). */
export type ItemPath = 'item' | `item.${string}` | `item[${number}]${string}` | 'item_index';

/** Given to step and output callbacks: builds references that the type checker verifies. */
export interface RefContext<P extends string> {
  /** Returns the reference text `{{path}}`; `path` must start with a declared step or the input name. */
  ref<const T extends P>(path: T): `{{${T}}}`;
}

/** A step definition or a callback that builds one with typed references. */
export type StepInput<P extends string> = StepDef<P> | ((context: RefContext<P>) => StepDef<P>);

/** A workflow definition whose input type is known to the type checker (the `~input` key is type-only). */
export type WorkflowDefinition<Input = unknown> = Workflow & { readonly '~input'?: Input };

/** The input type of a workflow builder or definition. */
export type InputOf<W> = W extends { readonly '~input'?: infer I } ? Exclude<I, undefined> : unknown;

/** Options of {@link WorkflowBuilder.input}. */
export interface WorkflowInputOptions<N extends string, S extends JsonSchemaLiteral> {
  /**
   * Name under which steps reference the input.
   * @default 'input'
   */
  name?: N;
  /** JSON Schema of the input; its type is inferred for references and {@link InputOf}. */
  schema: S;
  /** Values used for missing properties. */
  defaults?: Partial<FromJsonSchema<S>>;
}

/** `output_data` of a workflow: a JSON value, or a callback that builds one with typed references. */
export type OutputData<P extends string> =
  | ((context: RefContext<P>) => unknown)
  | string
  | number
  | boolean
  | null
  | readonly unknown[]
  | { readonly [key: string]: unknown };

/** Options of {@link WorkflowBuilder.wire}. */
export interface WireOptions<From extends string, To extends string> {
  /** Source: a step or the workflow input. */
  from: From;
  /** Target step. */
  to: To;
  /** Path inside the source's data; the whole data when absent. */
  fromPath?: string;
  /** Path inside the target's input; merged at its root when absent. */
  toPath?: string;
}

type Taken<Steps extends string, InputName extends string> = Steps | InputName;
/**
 * `unknown` when every reference in `Refs` fits a path of `P`; otherwise a type that requires a
 * property naming the ones that do not, so a value with a reference to an unknown step fails to
 * compile with an error naming the reference.
 */
type KnownRefs<Refs extends string, P extends string> = [Exclude<Refs, P>] extends [never]
  ? unknown
  : { 'reference to no step or input before it': Exclude<Refs, P> };

/** A step name, or a type error when the name is already taken. */
type FreshName<N extends string, T extends string> = N &
  ([N] extends [T] ? { 'step name already used': N } : unknown);

interface WorkflowState {
  readonly name: string;
  readonly description?: string;
  readonly steps: ReadonlyArray<Record<string, unknown> & { name: string; conditions?: StepCondition[] }>;
  readonly wires: ReadonlyArray<Record<string, string>>;
  readonly input?: Record<string, unknown>;
  readonly output?: Record<string, unknown>;
}

/**
 * Builds a workflow definition. Every method returns a new builder whose type remembers the
 * step names and the input type, so wires, conditions and references to unknown steps do not compile.
 */
export class WorkflowBuilder<
  Steps extends string = never,
  InputName extends string = 'input',
  Input = unknown,
  Each extends string = never,
> {
  /** Type-only marker of the input type; never set. */
  declare readonly '~input'?: Input;
  readonly #state: WorkflowState;

  /** @internal Use {@link workflow}. */
  constructor(state: WorkflowState) {
    this.#state = state;
  }

  /** Sets the free-text description. */
  description(text: string): WorkflowBuilder<Steps, InputName, Input, Each> {
    return new WorkflowBuilder({ ...this.#state, description: text });
  }

  /** Declares `workflow_input`: its name, JSON Schema (typed from the literal) and defaults. */
  input<const S extends JsonSchemaLiteral, const N extends string = 'input'>(
    options: WorkflowInputOptions<N, S>,
  ): WorkflowBuilder<Steps, N, FromJsonSchema<S>, Each> {
    const input: Record<string, unknown> = { name: options.name ?? 'input', input_schema: options.schema };
    if (options.defaults !== undefined) input['default_data'] = options.defaults;
    return new WorkflowBuilder({ ...this.#state, input });
  }

  /** Adds a step; `def` is a step helper's result, or a callback given `ref` for typed references. */
  step<const N extends string>(
    name: FreshName<N, Taken<Steps, InputName>>,
    def: StepInput<RefPath<Steps, InputName, Input, Each> | SecretPath>,
  ): WorkflowBuilder<Steps | N, InputName, Input, Each> {
    const body = typeof def === 'function' ? def(REF_CONTEXT) : def;
    return new WorkflowBuilder({ ...this.#state, steps: [...this.#state.steps, { name, ...body }] });
  }

  /**
   * Adds a `for_each` step: it runs `def` once per item of `list` (a path to an array or a data table),
   * and `def` may reference the item as `item.<field>` and its index as `item_index`. Later steps see
   * its output `{ items, succeeded, failed, skipped }`. Set `concurrency` and `on_error` in `def`.
   * @example
   * ```ts
   * workflow('pdfs')
   *   .step('customers', atlasGet('customers'))
   *   .forEach('invoices', 'customers.table', ({ ref }) => ({
   *     ...runWorkflow('invoice', { customer_id: ref('item.id') }),
   *     on_error: 'continue',
   *   }))
   *   .output({ data: ({ ref }) => ({ made: ref('invoices.succeeded') }) });
   * ```
   */
  forEach<const N extends string>(
    name: FreshName<N, Taken<Steps, InputName>>,
    list: RefPath<Steps, InputName, Input, Each>,
    def: StepInput<RefPath<Steps, InputName, Input, Each> | ItemPath | SecretPath>,
  ): WorkflowBuilder<Steps | N, InputName, Input, Each | N> {
    const body = typeof def === 'function' ? def(REF_CONTEXT) : def;
    const step = { name, for_each: `{{${list}}}`, ...body };
    return new WorkflowBuilder({ ...this.#state, steps: [...this.#state.steps, step] });
  }

  /** Adds conditions to a declared step: it runs only when all hold. */
  when(
    step: Steps,
    conditions: StepCondition<RefPath<Steps, InputName, Input, Each>>[],
  ): WorkflowBuilder<Steps, InputName, Input, Each> {
    const steps = this.#state.steps.map((s) =>
      s.name === step ? { ...s, conditions: [...(s.conditions ?? []), ...conditions] } : s,
    );
    return new WorkflowBuilder({ ...this.#state, steps });
  }

  /** Adds a wire from a step (or the input) to a step. */
  wire(options: WireOptions<Steps | InputName, Steps>): WorkflowBuilder<Steps, InputName, Input, Each> {
    const wire: Record<string, string> = { source_name: options.from };
    if (options.fromPath !== undefined) wire['source_data_path'] = options.fromPath;
    wire['target_name'] = options.to;
    if (options.toPath !== undefined) wire['target_data_path'] = options.toPath;
    return new WorkflowBuilder({ ...this.#state, wires: [...this.#state.wires, wire] });
  }

  /**
   * Declares `workflow_output`: values built from references (a value, or a callback given `ref`).
   * Each `{{...}}` reference written in a value must name a step or the input.
   */
  output<const D extends OutputData<RefPath<Steps, InputName, Input, Each>>>(options: {
    name?: string;
    data?: D & KnownRefs<RefsIn<D>, RefPath<Steps, InputName, Input, Each>>;
  }): WorkflowBuilder<Steps, InputName, Input, Each> {
    const output: Record<string, unknown> = { name: options.name ?? 'output' };
    if (options.data !== undefined)
      output['output_data'] = typeof options.data === 'function' ? options.data(REF_CONTEXT) : options.data;
    return new WorkflowBuilder({ ...this.#state, output });
  }

  /**
   * Returns the plain workflow definition, its shape validated against the workflow schema (field
   * types and names, required fields, step names). What needs the engine is checked when the engine
   * takes it (`engine.workflows.validate`, `create`, `replace`): that references resolve, that wires
   * make no cycle, that actions are registered, that `default_data` fits the input schema.
   * @throws ValidationError listing every problem of shape, each with its path (e.g. `steps[1].l2_data`).
   */
  build(): WorkflowDefinition<Input> {
    const { name, description, steps, wires, input, output } = this.#state;
    const body: Record<string, unknown> = { name };
    if (description !== undefined) body['description'] = description;
    body['steps'] = steps;
    body['wires'] = wires;
    if (input !== undefined) body['workflow_input'] = input;
    if (output !== undefined) body['workflow_output'] = output;
    return parse(WorkflowSchema, body, `workflow "${name}"`) as WorkflowDefinition<Input>;
  }
}

const REF_CONTEXT: RefContext<string> = {
  ref: (path) => `{{${path}}}`,
};

/**
 * Starts a workflow definition.
 * @example
 * ```ts
 * const notify = workflow('notify')
 *   .input({ schema: { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] } })
 *   .step('customer', getEntity('customers', { filters: [{ column: 'id', operator: 'EQUALS', value: '{{input.id}}' }] }))
 *   .step('send', ({ ref }) => l2('chat', 'bot', 'send_message', { channel: 'sales', message: ref('customer.body.table.rows[0][1]') }))
 *   .output({ data: ({ ref }) => ({ customer: ref('customer.body.table') }) })
 *   .build();
 * ```
 */
export function workflow(name: string): WorkflowBuilder {
  return new WorkflowBuilder({ name, steps: [], wires: [] });
}
