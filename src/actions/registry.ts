import type { z } from 'zod';
import { ConflictError, ValidationError, formatIssues, issuesUnder } from '../errors/index.js';
import type { ChatAdapter, FileStore } from '../adapters/types.js';
import type { MailAdapter } from '../adapters/mail/types.js';
import type { Catalog } from '../catalog/catalog.js';
import { DummyTaskInputSchema, check } from '../schema/index.js';
import { isDummyTaskInput } from '../schema/dummy-input.js';

/** What an action's `run` receives besides its input. */
export interface ActionContext {
  /** Cancels the action: the run was cancelled or the step timed out. */
  signal: AbortSignal;
  /** The engine's catalog (entity reads and writes). */
  catalog: Catalog;
  /** File stores by provider name. */
  files: Readonly<Record<string, FileStore>>;
  /** The chat adapter. */
  chat: ChatAdapter;
  /** The mail adapter `send_email` sends through (the engine always sets it). */
  mail?: MailAdapter;
  /**
   * The run and step this call belongs to; `item` is the item's index in a `for_each` step.
   * `traceparent` is the W3C trace context of the attempt's OpenTelemetry span, when one is
   * recorded: send it on outbound calls so they join the run's trace.
   */
  run: { id: string; workflow: string; step: string; attempt: number; item?: number; traceparent?: string };
  /**
   * `<run id>:<step name>`, with `:<item index>` inside a `for_each` step: the same across retries
   * and redeliveries of this step execution. Send it with every outside effect (request steps send it
   * as the `Idempotency-Key` header; the built-in file stores and chat adapters deduplicate by it) so
   * an execution delivered again does not repeat the effect.
   */
  idempotencyKey: string;
  /**
   * When this call must end, in epoch milliseconds: the earliest of the step's `timeout_ms` and the
   * run's time limit, when the engine knows one. `signal` fires then too, but only once the event
   * loop runs: work that holds the thread (a sandboxed script) stops itself by this time.
   */
  deadline?: number;
  /** The engine's limits. @internal */
  limits: Readonly<Record<string, number>>;
  /** Adds a line to the step's log in the run record. */
  log(message: string): void;
  /**
   * Tells the run that work which retries itself (a request step) is about to make try `attempt`
   * after `delayMs`, the try before having failed for `reason`: the step's `attempts` and a
   * `step.retrying` event show it, as they show the runner's own retries. @internal
   */
  retrying?(attempt: number, delayMs: number, reason: string): void;
  /**
   * Runs a workflow as a child of this run (its record names this run in `parent_run_id`) and
   * resolves to its output. The child is cancelled with this call's `signal`.
   * @throws the child's error when it does not succeed; a `LimitError` when runs nest deeper than 8.
   */
  runWorkflow(name: string, input: unknown): Promise<unknown>;
}

/** An `l2` action: `provider/module/action`, a zod schema of its input, and what it does. */
export interface ActionDefinition<S extends z.ZodType = z.ZodType> {
  /** Provider, e.g. `catalog`, `platform`, or your own. */
  provider: string;
  /** Module, e.g. `action`, `converters`. */
  module: string;
  /** Action name, e.g. `get_entity`. */
  action: string;
  /** zod schema of `input_data`; the input is validated against it before `run`. */
  input: S;
  /** Does the work and returns the step output (any JSON value: one JSON cannot hold fails the step with `invalid_output`). */
  run(input: z.output<S>, context: ActionContext): unknown;
  /** One line on what the action does. */
  description?: string;
}

/** A stand-in for an action in tests, made by {@link ActionRegistry.stub}. */
export interface ActionStub {
  /** The resolved input of each call, in order. */
  readonly calls: unknown[];
  /** Puts the real action back. */
  restore(): void;
}

/** What a stub does: a function of the input, or a fixed output. */
export type StubBehaviour = ((input: unknown, context: ActionContext) => unknown) | { output: unknown };

/** The key `provider/module/action`. */
export function actionKey(provider: string, module: string, action: string): string {
  return `${provider}/${module}/${action}`;
}

/**
 * The action registry, reached as `engine.actions`: built-in actions, your own, and test stubs.
 * @example
 * ```ts
 * engine.actions.register({
 *   provider: 'acme', module: 'billing', action: 'charge',
 *   input: z.object({ amount: z.number() }),
 *   run: async ({ amount }) => ({ charged: amount }),
 * });
 * ```
 */
export class ActionRegistry {
  #actions = new Map<string, ActionDefinition>();
  #stubs = new Map<string, { behaviour: StubBehaviour; calls: unknown[] }>();
  #fallback: (provider: string, module: string, action: string, key: string) => ActionDefinition | undefined;

  /** @internal */
  constructor(
    fallback: (
      provider: string,
      module: string,
      action: string,
      key: string,
    ) => ActionDefinition | undefined = () => undefined,
  ) {
    this.#fallback = fallback;
  }

  /**
   * Adds an action. @throws {@link ConflictError} when `provider/module/action` is taken, by your own
   * action or a built-in one (stand in for a built-in in tests with {@link ActionRegistry.stub}).
   */
  register<S extends z.ZodType>(definition: ActionDefinition<S>): void {
    if (typeof definition !== 'object' || definition === null)
      throw new TypeError('an action must be an object with provider, module, action, input and run');
    for (const field of ['provider', 'module', 'action'] as const) {
      if (typeof definition[field] !== 'string' || definition[field] === '')
        throw new TypeError(`action ${field} must be a non-empty string`);
    }
    if (typeof definition.run !== 'function') throw new TypeError('action run must be a function');
    if (typeof definition.input?.safeParse !== 'function')
      throw new TypeError('action input must be a zod schema');
    const key = actionKey(definition.provider, definition.module, definition.action);
    // A built-in action is taken too: replacing one would change every workflow using it (tests use `stub`).
    if (
      this.#actions.has(key) ||
      this.#fallback(definition.provider, definition.module, definition.action, key) !== undefined
    )
      throw new ConflictError('action', key);
    this.#actions.set(key, definition as unknown as ActionDefinition);
  }

  /** True when the action exists (registered, built in, or a file-store upload). */
  has(provider: string, module: string, action: string): boolean {
    const key = actionKey(provider, module, action);
    return (
      this.#stubs.has(key) ||
      this.#actions.has(key) ||
      this.#fallback(provider, module, action, key) !== undefined
    );
  }

  /**
   * True when `key` runs your own code: an action you registered, or a stub. The engine checks what
   * such an action returns (built-in actions return JSON by construction). @internal
   */
  isOwn(key: string): boolean {
    return this.#stubs.has(key) || this.#actions.has(key);
  }

  /** Every registered action key. */
  list(): string[] {
    return [...this.#actions.keys()].sort();
  }

  /**
   * Replaces an action (built in or your own) for tests: the stub records each resolved input in
   * `calls` and returns `behaviour`'s output. The real action comes back with `restore()`.
   * @example
   * ```ts
   * const chat = engine.actions.stub('chat/bot/send_message', { output: { ok: true } });
   * const run = await engine.run('notify', { id: 7 });
   * expect(chat.calls).toEqual([{ channel: 'ops', message: 'Order 7 shipped' }]);
   * chat.restore();
   * ```
   */
  stub(key: string, behaviour: StubBehaviour = { output: {} }): ActionStub {
    const entry = { behaviour, calls: [] as unknown[] };
    this.#stubs.set(key, entry);
    return {
      calls: entry.calls,
      restore: () => {
        if (this.#stubs.get(key) === entry) this.#stubs.delete(key);
      },
    };
  }

  /**
   * Runs an action: validates the input with its schema, then calls it (or its stub). Returns the
   * action's value or promise as it is (one await in the caller, not one per layer). `key` is
   * {@link actionKey} of the three, when the caller keeps it. @internal
   */
  invoke(
    provider: string,
    module: string,
    action: string,
    input: unknown,
    context: ActionContext,
    key: string = actionKey(provider, module, action),
  ): unknown {
    const stub = this.#stubs.get(key);
    if (stub) {
      stub.calls.push(input);
      return typeof stub.behaviour === 'function' ? stub.behaviour(input, context) : stub.behaviour.output;
    }
    const definition = this.#actions.get(key) ?? this.#fallback(provider, module, action, key);
    if (!definition)
      throw new ValidationError([
        { code: 'unknown_action', path: 'l2_data', message: `no action "${key}" is registered` },
      ]);
    // `dummy_task`'s schema takes any object as it is: no need to run zod for one.
    if (definition.input === DummyTaskInputSchema && isDummyTaskInput(input))
      return definition.run(input, context);
    const parsed = check(definition.input, input);
    if (!parsed.ok) {
      throw new ValidationError(
        issuesUnder(parsed.issues, 'input_data'),
        `invalid input of action ${key}: ${formatIssues(parsed.issues)}`,
      );
    }
    return definition.run(parsed.value, context);
  }
}
