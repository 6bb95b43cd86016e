/**
 * What the Model Context Protocol server offers one principal: a tool per workflow it may run,
 * `read_entity` and `get_run`, and the entity definitions it may see as resources. Every call goes
 * through `engine.as(principal)`, which checks and audits it; the lists are only filtered by the
 * same grants, so a tool missing from a list is also refused when called.
 * @module
 */
import { z } from 'zod';
import { Grants } from '../access/grants.js';
import { SERVICE_PRINCIPAL, type Principal } from '../access/principal.js';
import type { Engine } from '../engine/engine.js';
import type { EngineView } from '../engine/engine-view.js';
import type { RunEvent } from '../engine/record.js';
import { isStepwireError, isValidationError } from '../errors/index.js';
import { GetEntityInputSchema, type Entity, type RunRecord, type Workflow } from '../schema/index.js';

/** How long a tool call waits for its run by default, in ms: under the 60 s most clients give a call. */
export const DEFAULT_CALL_TIMEOUT_MS = 50_000;

/** The longest wait a tool call may be given, in ms. */
const MAX_CALL_TIMEOUT_MS = 3_600_000;

/** Options of the Model Context Protocol server (`createMcpServer`; `stepwire mcp` and `/mcp` set them). */
export interface McpOptions {
  /**
   * Who the server acts for: every tool call and resource read goes through `engine.as(principal)`.
   * @default the engine's own service principal (everything is allowed)
   */
  principal?: Principal;
  /**
   * How long a tool call waits for its run, in ms (1 to 3,600,000). A run still going then is
   * answered with its state and run id, and goes on; so is a run that waits for a person.
   * @default 50000
   */
  callTimeoutMs?: number;
  /**
   * Where runs are read over HTTP, e.g. `https://flows.example.com`: an answer about a run that
   * goes on says `GET <runsUrl>/runs/<id>`. Without it the path alone is named.
   */
  runsUrl?: string;
}

/** The options with their defaults, checked. @internal */
export interface ResolvedMcpOptions {
  principal: Principal;
  callTimeoutMs: number;
  runsUrl: string;
}

/**
 * The options with defaults filled in.
 * @throws a `TypeError` naming the option that is wrong.
 * @internal
 */
export function resolveMcpOptions(options: McpOptions = {}): ResolvedMcpOptions {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('MCP options must be an object { principal?, callTimeoutMs?, runsUrl? }');
  const { callTimeoutMs = DEFAULT_CALL_TIMEOUT_MS, runsUrl = '' } = options;
  if (!Number.isInteger(callTimeoutMs) || callTimeoutMs < 1 || callTimeoutMs > MAX_CALL_TIMEOUT_MS)
    throw new TypeError(
      `MCP options: callTimeoutMs must be a whole number of ms from 1 to ${MAX_CALL_TIMEOUT_MS}, got ${String(callTimeoutMs)}`,
    );
  if (typeof runsUrl !== 'string')
    throw new TypeError(`MCP options: runsUrl must be a string, got ${typeof runsUrl}`);
  return {
    principal: options.principal ?? SERVICE_PRINCIPAL,
    callTimeoutMs,
    runsUrl: runsUrl.replace(/\/+$/, ''),
  };
}

/** A tool as `tools/list` gives it. @internal */
export interface ToolInfo {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations?: Record<string, unknown>;
}

/** The answer of `tools/call`. @internal */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A resource as `resources/list` gives it. @internal */
export interface ResourceInfo {
  [key: string]: unknown;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
}

/** What a tool call may do besides answering: report progress, notice that the client gave up. @internal */
export interface CallContext {
  /** Aborts when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** Sends a progress notification, when the client asked for them (a `progressToken`). */
  progress?: (progress: number, message: string) => Promise<void>;
}

/** A tool or resource the client named that does not exist (a protocol error, not a tool's). @internal */
export class UnknownName extends Error {
  override name = 'UnknownName';
  constructor(
    message: string,
    readonly kind: 'tool' | 'resource',
  ) {
    super(message);
  }
}

/** The tool reading entity rows. */
const READ_ENTITY = 'read_entity';
/** The tool reading a run that went on past a call. */
const GET_RUN = 'get_run';
/** Names a workflow's tool never takes. */
const BUILT_IN: ReadonlySet<string> = new Set([READ_ENTITY, GET_RUN]);

/** The names tool names should have (the protocol's recommendation, which clients enforce). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The scheme and path of an entity definition's resource. */
const ENTITY_URI = 'stepwire://entities/';

/** Statuses a run ends in. */
const ENDED: ReadonlySet<string> = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

let readEntitySchema: ToolInfo['inputSchema'] | undefined;

/**
 * The tool name of each workflow, by tool name: a workflow's own name where it is a valid tool
 * name and no built-in tool's, else its name with every other character made `_` and, when that
 * is taken, `_2`, `_3`... Worked out over every workflow (not the principal's), so a name does not
 * depend on who asks.
 * @internal
 */
export function toolNames(workflows: readonly string[]): Map<string, string> {
  const byTool = new Map<string, string>();
  const sorted = [...workflows].sort();
  const later: string[] = [];
  for (const name of sorted) {
    if (TOOL_NAME.test(name) && !BUILT_IN.has(name)) byTool.set(name, name);
    else later.push(name);
  }
  for (const name of later) {
    const base = name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 120);
    let tool = base;
    for (let n = 2; byTool.has(tool) || BUILT_IN.has(tool); n++) tool = `${base}_${n}`;
    byTool.set(tool, name);
  }
  return byTool;
}

/**
 * The input schema of a workflow's tool, and whether the arguments wrap the input: a tool's input
 * is always an object, so a workflow whose input is no object takes it as `{ "input": ... }`.
 * Properties `default_data` fills in are not required of the caller.
 * @internal
 */
export function workflowToolInput(workflow: Workflow): { schema: ToolInfo['inputSchema']; wrapped: boolean } {
  const declared = workflow.workflow_input?.input_schema as Record<string, unknown> | undefined;
  if (declared === undefined) return { schema: { type: 'object', properties: {} }, wrapped: false };
  const { $schema: _, ...schema } = declared;
  if (schema['type'] !== undefined && schema['type'] !== 'object')
    return {
      schema: {
        type: 'object',
        properties: { input: schema },
        required: ['input'],
        additionalProperties: false,
      },
      wrapped: true,
    };
  const defaults = workflow.workflow_input?.default_data ?? {};
  const required = Array.isArray(schema['required'])
    ? (schema['required'] as unknown[]).filter(
        (name) => typeof name !== 'string' || !Object.hasOwn(defaults, name),
      )
    : undefined;
  const { required: __, ...rest } = schema;
  return {
    schema: { ...rest, type: 'object', ...(required && required.length > 0 ? { required } : {}) },
    wrapped: false,
  };
}

/** The server's side of one principal: the lists it sees and the calls it makes. @internal */
export class McpSession {
  readonly #engine: Engine;
  readonly #view: EngineView;
  readonly #options: ResolvedMcpOptions;

  constructor(engine: Engine, options: ResolvedMcpOptions) {
    this.#engine = engine;
    this.#options = options;
    this.#view = engine.as(options.principal);
  }

  /** The principal's grants under the policy stored now, for filtering the lists. */
  async #grants(): Promise<Grants> {
    const principal = this.#view.principal;
    if (principal.kind === 'service' || !(await this.#engine.accessControlled()))
      return new Grants(principal, undefined);
    return new Grants(principal, (await this.#engine.access.get()) ?? { roles: {} });
  }

  /** Every workflow, and the tool name of each. */
  async #workflows(): Promise<{ workflows: Map<string, Workflow>; byTool: Map<string, string> }> {
    // The host's own list: a principal may run a workflow without `definitions.read`.
    const list = await this.#engine.workflows.list();
    const workflows = new Map(list.map((w) => [w.name, w]));
    return { workflows, byTool: toolNames([...workflows.keys()]) };
  }

  /** The tools the principal may call. */
  async tools(): Promise<ToolInfo[]> {
    const [grants, { workflows, byTool }] = await Promise.all([this.#grants(), this.#workflows()]);
    const tools: ToolInfo[] = [];
    for (const [tool, name] of byTool) {
      const workflow = workflows.get(name)!;
      if (!grants.allows('workflow.run', name)) continue;
      tools.push({
        name: tool,
        title: name,
        description:
          `${workflow.description ? `${workflow.description.replace(/\.?$/, '.')} ` : ''}` +
          `Runs the workflow "${name}" and answers with its output.`,
        inputSchema: workflowToolInput(workflow).schema,
      });
    }
    tools.sort((a, b) => a.name.localeCompare(b.name));
    if (grants.allowsAny('entity.read'))
      tools.push({
        name: READ_ENTITY,
        title: 'Read entity rows',
        description:
          'Reads rows of an entity (the get_entity action): entity_name, operation { select_columns?, filters?, group_by?, aggregates?, order_by? }, ' +
          'page_size? (default 100), page_number? (from 1). Only the rows and columns you may see are answered. ' +
          `The entities and their columns are the resources ${ENTITY_URI}<name>.`,
        inputSchema: (readEntitySchema ??= jsonSchemaOf(GetEntityInputSchema)),
        annotations: { readOnlyHint: true },
      });
    if (grants.allows('runs.read_own'))
      tools.push({
        name: GET_RUN,
        title: 'Read a run',
        description:
          'Reads a run a tool call started that was still going (or waiting for a person) when the call answered: its status, and its output once it succeeded.',
        inputSchema: {
          type: 'object',
          properties: {
            run_id: { type: 'string', minLength: 1, description: 'The run id the call answered with.' },
          },
          required: ['run_id'],
          additionalProperties: false,
        },
        annotations: { readOnlyHint: true },
      });
    return tools;
  }

  /**
   * Calls a tool. A problem of the call (invalid arguments, a refusal, a failed run) is an error
   * result naming it; a name that is no tool throws {@link UnknownName}.
   */
  async call(
    name: string,
    args: Record<string, unknown> | undefined,
    context: CallContext,
  ): Promise<ToolResult> {
    const input = args ?? {};
    try {
      if (name === READ_ENTITY) return readAnswer(await this.#view.catalog.getEntity(input as never));
      if (name === GET_RUN) return await this.#getRun(input);
      const { workflows, byTool } = await this.#workflows();
      const workflow = byTool.get(name);
      if (workflow === undefined)
        throw new UnknownName(`Unknown tool "${name}": tools/list names the tools you may call.`, 'tool');
      const wrapped = workflowToolInput(workflows.get(workflow)!).wrapped;
      return await this.#run(workflow, wrapped ? input['input'] : input, context);
    } catch (error) {
      if (error instanceof UnknownName) throw error;
      return errorResult(error);
    }
  }

  /** The entity definitions the principal may see. */
  async resources(): Promise<ResourceInfo[]> {
    let entities: Entity[];
    try {
      entities = await this.#view.catalog.listEntities();
    } catch (error) {
      if (isStepwireError(error) && error.code === 'forbidden') return [];
      throw error;
    }
    return entities.map((entity) => ({
      uri: `${ENTITY_URI}${encodeURIComponent(entity.name)}`,
      name: entity.name,
      title: `Entity ${entity.name}`,
      description:
        entity.description ?? `The definition of entity "${entity.name}": its columns and primary key.`,
      mimeType: 'application/json',
    }));
  }

  /**
   * One entity definition, as the principal sees it.
   * @throws {@link UnknownName} for a URI that names no entity the principal may see.
   */
  async readResource(uri: string): Promise<{ uri: string; mimeType: string; text: string }> {
    const name = uri.startsWith(ENTITY_URI) ? safeDecode(uri.slice(ENTITY_URI.length)) : undefined;
    if (name === undefined || name === '')
      throw new UnknownName(`Unknown resource "${uri}": resources/list names the resources.`, 'resource');
    try {
      const entity = await this.#view.catalog.getDefinition(name);
      return { uri, mimeType: 'application/json', text: JSON.stringify(entity, null, 2) };
    } catch (error) {
      // Not there and not to be seen look the same.
      if (isStepwireError(error) && (error.code === 'not_found' || error.code === 'forbidden'))
        throw new UnknownName(`Unknown resource "${uri}": resources/list names the resources.`, 'resource');
      throw error;
    }
  }

  /** Starts a workflow and waits for its end, the call's time limit, or a wait for a person. */
  async #run(workflow: string, input: unknown, context: CallContext): Promise<ToolResult> {
    // Checks the permission, then the input: nothing runs when either fails.
    const handle = await this.#view.start(workflow, input);
    const steps = new Map<string, string>();
    return new Promise<ToolResult>((resolve) => {
      let done = false;
      const finish = (result: ToolResult) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        context.signal.removeEventListener('abort', aborted);
        resolve(result);
      };
      const goingOn = (status: string) =>
        void this.#goingOn(handle.id, workflow, status, steps).then(finish, (error: unknown) =>
          finish(errorResult(error, false)),
        );
      const timer = setTimeout(() => goingOn('running'), this.#options.callTimeoutMs);
      // The client gave up: the run goes on; nobody reads this answer.
      const aborted = () => goingOn('running');
      context.signal.addEventListener('abort', aborted);
      handle.result.then(
        (record) => (ENDED.has(record.status) ? finish(finished(record)) : goingOn(record.status as string)),
        (error: unknown) => finish(errorResult(error, false)),
      );
      void (async () => {
        let count = 0;
        for await (const event of handle.events) {
          if (done) break;
          if (isWaiting(event)) return goingOn('waiting');
          const step = stepOf(event);
          if (step === undefined) continue;
          steps.set(step.name, step.status);
          if (step.status !== 'running' && context.progress)
            await context.progress(++count, `step "${step.name}" ${step.status}`).catch(() => {});
        }
      })().catch(() => {});
    });
  }

  /** The answer of `get_run`: the run's end as a tool call's, or its state. */
  async #getRun(input: Record<string, unknown>): Promise<ToolResult> {
    const id = input['run_id'];
    if (typeof id !== 'string' || id === '')
      return invalid([
        { path: 'run_id', message: 'run_id must be a non-empty string (the run id a call answered with)' },
      ]);
    const record = await this.#view.getRun(id);
    if (ENDED.has(record.status)) return finished(record);
    const steps = new Map(record.steps.map((s) => [s.name, s.status as string]));
    return this.#goingOn(record.id, record.workflow, record.status, steps, record);
  }

  /** The answer about a run that goes on: its state, and how to read it later. */
  async #goingOn(
    id: string,
    workflow: string,
    seen: string,
    steps: Map<string, string>,
    known?: RunRecord,
  ): Promise<ToolResult> {
    let record = known;
    // The record when the principal may read it, for its status and steps now.
    record ??= await this.#view.getRun(id).catch(() => undefined);
    if (record && ENDED.has(record.status)) return finished(record);
    const status = record?.status ?? seen;
    // A waiting step says what it waits for (an approval and its link, an event, a time).
    const shown = record
      ? record.steps.map((s) => {
          const wait = (s as { wait?: unknown }).wait;
          return { name: s.name, status: s.status, ...(wait === undefined ? {} : { wait }) };
        })
      : [...steps].map(([name, s]) => ({ name, status: s }));
    const http = `GET ${this.#options.runsUrl}/runs/${encodeURIComponent(id)}`;
    const mayRead = (await this.#grants()).allows('runs.read_own');
    const why =
      status === 'waiting'
        ? 'is waiting (for a person or an event)'
        : `is still ${status} after ${formatSeconds(this.#options.callTimeoutMs)}`;
    const text =
      `The run ${id} of workflow "${workflow}" ${why}; it goes on without this call. ` +
      (mayRead
        ? `Read it later with the ${GET_RUN} tool ({"run_id": "${id}"}) or ${http}.`
        : `Its record is read with ${http} by someone who may read runs.`);
    return {
      content: [{ type: 'text', text }],
      structuredContent: {
        run_id: id,
        workflow,
        status,
        steps: shown,
        continue: { http, ...(mayRead ? { tool: { name: GET_RUN, arguments: { run_id: id } } } : {}) },
      },
    };
  }
}

/** The step and where it is, of an event about a step. */
function stepOf(event: RunEvent): { name: string; status: string } | undefined {
  switch (event.type) {
    case 'step.started':
      return { name: event.step, status: 'running' };
    case 'step.succeeded':
      return { name: event.step, status: 'succeeded' };
    case 'step.failed':
      return { name: event.step, status: 'failed' };
    case 'step.skipped':
      return { name: event.step, status: 'skipped' };
    case 'step.waiting' as RunEvent['type']:
      return { name: (event as { step: string }).step, status: 'waiting' };
    default:
      return undefined;
  }
}

/** Whether an event says the run now waits (for a person, an event or a timer). */
function isWaiting(event: RunEvent): boolean {
  const { type, status } = event as { type: string; status?: unknown };
  return type === 'run.waiting' || status === 'waiting';
}

/** The answer of a run that ended: its output, or an error naming the step that failed. */
function finished(record: RunRecord): ToolResult {
  const meta = { _meta: { 'stepwire/run_id': record.id } };
  if (record.status === 'succeeded') return { ...structured(record.output), ...meta };
  const error = record.error;
  const where = error?.step ? ` at step "${error.step}"` : '';
  const text =
    record.status === 'failed'
      ? `The run ${record.id} of workflow "${record.workflow}" failed${where}: ${error?.message ?? 'no reason given'}`
      : `The run ${record.id} of workflow "${record.workflow}" was ${record.status}${error ? `: ${error.message}` : ''}`;
  return {
    content: [{ type: 'text', text }],
    structuredContent: { run_id: record.id, workflow: record.workflow, status: record.status, error },
    isError: true,
    ...meta,
  };
}

/** A value as a result: JSON text, and the value itself as structured content (an object). */
function structured(value: unknown): ToolResult {
  const object =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { result: value ?? null };
  return { content: [{ type: 'text', text: JSON.stringify(value ?? null) }], structuredContent: object };
}

/**
 * The answer of `read_entity`: the rows, or an error result when the read reports errors (as
 * get_entity does in its body: an unknown entity or column, a filter of the wrong type).
 */
function readAnswer(output: unknown): ToolResult {
  const error = (output as { body?: { error?: { is_error?: unknown; errors?: unknown } } } | null)?.body
    ?.error;
  if (error?.is_error !== true) return structured(output);
  const errors = Array.isArray(error.errors) ? error.errors.map(String) : [];
  return {
    content: [{ type: 'text', text: `Nothing was read: ${errors.join('; ') || 'the read failed'}` }],
    structuredContent: output as Record<string, unknown>,
    isError: true,
  };
}

/** The error result of invalid arguments, naming each field. */
function invalid(issues: readonly { path: string; message: string; code?: string }[]): ToolResult {
  // A message that names its path already is not prefixed with it again.
  const listed = issues
    .map((i) => (i.path && !i.message.includes(i.path) ? `${i.path}: ${i.message}` : i.message))
    .join('; ');
  return {
    content: [{ type: 'text', text: `Invalid arguments, nothing was run: ${listed}` }],
    structuredContent: {
      error: {
        code: 'validation_failed',
        issues: issues.map(({ path, message, code }) => ({ path, message, code })),
      },
    },
    isError: true,
  };
}

/**
 * The error result of a call that failed before or without a run: invalid arguments (each field
 * named), a refusal (naming the permission), something not found. Anything else is rethrown (an
 * internal error of the server).
 */
function errorResult(error: unknown, rethrow = true): ToolResult {
  if (isValidationError(error)) return invalid(error.issues);
  if (isStepwireError(error) || !rethrow) {
    const code = isStepwireError(error) ? error.code : 'internal';
    const message = error instanceof Error ? error.message : String(error);
    return { content: [{ type: 'text', text: `${code}: ${message}` }], isError: true };
  }
  throw error;
}

/** A zod schema's JSON Schema, as a tool's input schema. */
function jsonSchemaOf(schema: z.ZodType): ToolInfo['inputSchema'] {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
