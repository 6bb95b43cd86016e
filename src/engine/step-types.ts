import { StepwireError, ValidationError, WriteRejectedError } from '../errors/index.js';
import type { ActionContext } from '../actions/registry.js';
import type { AtlasData, DataTable, RequestData } from '../schema/index.js';
import { findReferences, isWholeReference } from '../schema/index.js';
import { performRequest } from '../request/index.js';
import { tableRow } from '../catalog/sheet-mapping.js';
import type { EntityData } from '../script/index.js';
import type { PlannedStep } from './plan.js';
import type { RunServices } from './run.js';
import type { TransformContext } from './scripts.js';

/** Runs one step of any type with its resolved data; returns the output or a promise of it. @internal */
export function runStepType(
  planned: PlannedStep,
  data: unknown,
  context: ActionContext,
  services: RunServices,
): unknown {
  const step = planned.step;
  switch (step.type) {
    case 'l2': {
      const { provider, module, action } = step.l2_data!;
      return services.actions.invoke(provider, module, action, data ?? {}, context);
    }
    case 'request':
      return runRequest(data as RequestData, step.retry, context, services);
    case 'atlas': {
      const atlas = data as AtlasData;
      return atlas.action === 'get'
        ? runGet(step.atlas_data!, atlas, context, services)
        : runTransform(step.atlas_data!, atlas, context, services);
    }
  }
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

async function runRequest(
  data: RequestData,
  retry: PlannedStep['step']['retry'],
  context: ActionContext,
  services: RunServices,
): Promise<unknown> {
  const { limits, security, fetch } = services.options;
  const method = (data.method ?? 'GET').toUpperCase();
  const options: Parameters<typeof performRequest>[1] = {
    fetch,
    allowHosts: security.allowHosts,
    signal: context.signal,
    timeouts: { headersMs: limits.requestHeadersTimeoutMs, totalMs: limits.requestTimeoutMs },
    maxResponseBytes: limits.requestMaxResponseBytes,
    maxRedirects: limits.requestMaxRedirects,
  };
  if (security.resolve) options.resolve = security.resolve;
  if (retry && IDEMPOTENT.has(method))
    options.retry = {
      attempts: retry.attempts,
      baseMs: retry.backoff_ms ?? 1000,
      capMs: retry.max_backoff_ms ?? 30_000,
    };
  return performRequest(data as Parameters<typeof performRequest>[0], options);
}

/** One input entity of an atlas step, as written and as resolved. */
interface InputEntity {
  name: string;
  table?: DataTable;
}

function inputEntities(raw: AtlasData, resolved: AtlasData): InputEntity[] {
  return (resolved.input_entities ?? []).map((item, i) => {
    const written = raw.input_entities?.[i];
    if (typeof item === 'object' && item !== null && 'columns' in item && 'rows' in item) {
      // A reference that resolved to a table: it is known by the step it came from.
      const root =
        typeof written === 'string' && isWholeReference(written)
          ? findReferences(written)[0]!.expression.split(/[.[]/)[0]!
          : `input_${i}`;
      return { name: root, table: item as DataTable };
    }
    if (typeof item === 'string') return { name: item };
    if (typeof item === 'object' && item !== null && typeof (item as { name?: unknown }).name === 'string')
      return { name: (item as { name: string }).name };
    throw new ValidationError([
      {
        code: 'invalid_input_entity',
        path: `atlas_data.input_entities[${i}]`,
        message: 'an input entity must name an entity or resolve to a data table',
      },
    ]);
  });
}

async function runGet(
  raw: AtlasData,
  atlas: AtlasData,
  context: ActionContext,
  services: RunServices,
): Promise<unknown> {
  const [entity] = inputEntities(raw, atlas);
  if (!entity || entity.table)
    throw new ValidationError([
      {
        code: 'invalid_input_entity',
        path: 'atlas_data.input_entities',
        message: 'a get step reads one entity by name',
      },
    ]);
  const input = atlas.input_data ?? {};
  const output = await context.catalog.getEntity(
    {
      entity_name: entity.name,
      operation: input.operation ?? {},
      page_size: input.page_size ?? services.options.limits.maxPageSize,
      ...(input.page_number === undefined ? {} : { page_number: input.page_number }),
    },
    { signal: context.signal },
  );
  if (output.body.error?.is_error) {
    throw new ValidationError(
      (output.body.error.errors ?? []).map((message) => ({
        code: 'read_failed',
        path: 'atlas_data.input_data',
        message,
      })),
      `reading "${entity.name}" failed: ${(output.body.error.errors ?? []).join('; ')}`,
    );
  }
  return { table: output.body.table };
}

async function runTransform(
  raw: AtlasData,
  atlas: AtlasData,
  context: ActionContext,
  services: RunServices,
): Promise<unknown> {
  const codeFile = atlas.input_data?.code_file ?? '';
  const inputs: Record<string, EntityData> = {};
  for (const entity of inputEntities(raw, atlas)) {
    if (entity.table) {
      inputs[entity.name] = {
        columns: (entity.table.columns ?? []).map((c) => ({ name: c.name, type: c.type ?? 'STRING' })),
        rows: entity.table.rows ?? [],
      };
    } else {
      const { entity: definition, table } = await context.catalog.table(entity.name, {
        signal: context.signal,
      });
      const rows: unknown[][] = new Array(table.length);
      for (let i = 0; i < table.length; i++) rows[i] = tableRow(table, i);
      inputs[entity.name] = {
        columns: definition.columns.map((c) => ({ name: c.name, type: c.type })),
        rows,
      };
    }
  }
  const outputs = (atlas.output_entities ?? []).map((o) => o.name);
  for (const name of outputs) await context.catalog.getDefinition(name);
  const trusted = services.scripts.trusted(codeFile);
  let writes: Record<string, Record<string, unknown>[]>;
  let logs: string[] = [];
  if (trusted) {
    ({ writes, logs } = await runTrusted(trusted, inputs, outputs));
  } else {
    const source = await services.scripts.get(codeFile);
    const limits = services.options.limits;
    ({ writes, logs } = await services.sandbox.run({
      source,
      filename: codeFile,
      inputs,
      outputs,
      limits: {
        timeoutMs: limits.scriptTimeoutMs,
        memoryBytes: limits.scriptMemoryBytes,
        stackBytes: limits.scriptStackBytes,
        maxOutputBytes: limits.scriptOutputBytes,
      },
      signal: context.signal,
    }));
  }
  for (const line of logs) context.log(line);
  const modes = new Map((atlas.output_entities ?? []).map((o) => [o.name, o.write_mode]));
  try {
    const result = await context.catalog.write(
      Object.entries(writes).map(([entity, rows]) => ({ entity, rows, mode: modes.get(entity) ?? 'append' })),
      { signal: context.signal },
    );
    for (const name of outputs) result.written[name] ??= 0;
    return { written: result.written };
  } catch (error) {
    if (error instanceof WriteRejectedError) throw error;
    throw error instanceof StepwireError
      ? error
      : new StepwireError('write_failed', `writing the transform's output failed: ${String(error)}`, {
          cause: error,
        });
  }
}

async function runTrusted(
  fn: (context: TransformContext) => void | Promise<void>,
  inputs: Record<string, EntityData>,
  outputs: readonly string[],
) {
  const writes: Record<string, Record<string, unknown>[]> = {};
  const logs: string[] = [];
  const context: TransformContext = {
    getEntity(name) {
      const data = inputs[name];
      if (!data)
        throw new ValidationError([
          {
            code: 'unknown_entity',
            path: 'getEntity',
            message: `entity "${name}" is not an input of this step (inputs: ${Object.keys(inputs).join(', ')})`,
          },
        ]);
      return data.rows.map((row) => Object.fromEntries(data.columns.map((c, i) => [c.name, row[i] ?? null])));
    },
    writeEntity(name, rows) {
      if (!outputs.includes(name))
        throw new ValidationError([
          {
            code: 'unknown_entity',
            path: 'writeEntity',
            message: `entity "${name}" is not an output of this step (outputs: ${outputs.join(', ')})`,
          },
        ]);
      (writes[name] ??= []).push(...toRowObjects(rows));
    },
    log(...values) {
      logs.push(values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' '));
    },
  };
  await fn(context);
  return { writes, logs };
}

function toRowObjects(
  rows: readonly Record<string, unknown>[] | { columns: { name: string }[]; rows: unknown[][] },
): Record<string, unknown>[] {
  if (Array.isArray(rows)) return rows as Record<string, unknown>[];
  const table = rows as { columns: { name: string }[]; rows: unknown[][] };
  return table.rows.map((row) =>
    Object.fromEntries(table.columns.map((column, i) => [column.name, row[i] ?? null])),
  );
}
