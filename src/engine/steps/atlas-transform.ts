import {
  LimitError,
  StepwireError,
  ValidationError,
  WriteRejectedError,
  issuesUnder,
} from '../../errors/index.js';
import type { ActionContext } from '../../actions/registry.js';
import { sleep } from '../../retry/index.js';
import type { AtlasData, DataTable } from '../../schema/index.js';
import { repeatedOutputs } from '../../schema/steps/output-entities.js';
import { entityRowsOf, type EntityRows } from '../../catalog/rows.js';
import type { EntityData } from '../../script/index.js';
import { keepLogs, logsOf } from '../../script/outcome.js';
import { columnarEntity, rowObjectsOf } from '../../script/entity-data.js';
import { tableShape } from '../../schema/table-rows.js';
import type { RunServices } from '../plan-types.js';
import type { TransformContext } from '../scripts.js';

/** One input entity of an atlas step: its name, and its rows when a reference gave them. @internal */
export interface InputEntity {
  name: string;
  table?: DataTable;
  /** Where it is in `atlas_data.input_entities`, for messages. */
  index?: number;
}

/**
 * Runs an atlas `transform`: loads the input entities, runs the script (a trusted function, or stored
 * source in the sandbox) and writes what it returns to the output entities, all or nothing, as one
 * write carrying the step's idempotency key (appended rows already there, identical, count as written).
 * @internal
 */
export async function runTransform(
  inputEntities: InputEntity[],
  atlas: AtlasData,
  context: ActionContext,
  services: RunServices,
): Promise<unknown> {
  const codeFile = atlas.input_data?.code_file ?? '';
  // Entity names are the user's ("constructor", "__proto__"): no prototype to find them on.
  const inputs: Record<string, EntityData> = Object.create(null) as Record<string, EntityData>;
  for (const entity of inputEntities) {
    if (entity.table) {
      inputs[entity.name] = tableEntity(entity.table, `atlas_data.input_entities[${entity.index ?? 0}]`);
    } else {
      const { entity: definition, table } = await context.catalog.table(entity.name, {
        signal: context.signal,
      });
      // The table's own columns, not copied: the sandbox encodes them as they are, and may keep
      // the encoding for the next run over the same table (its first `length` rows never change).
      inputs[entity.name] = columnarEntity(
        definition.columns.map((c) => ({ name: c.name, type: c.type })),
        table.data,
        table.length,
        { unchanging: true },
      );
    }
  }
  const repeats = repeatedOutputs(atlas.output_entities ?? []);
  // Checked when the workflow is created; kept here for definitions stored before that check.
  if (repeats.length > 0)
    throw new ValidationError(
      repeats.map((r) => ({
        code: 'repeated_entity',
        path: `output_entities[${r.index}].name`,
        message: r.message,
      })),
    );
  const outputs = [...new Set((atlas.output_entities ?? []).map((o) => o.name))];
  for (const name of outputs) await context.catalog.getDefinition(name);
  const trusted = services.scripts.trusted(codeFile);
  let writes: Record<string, EntityRows>;
  let logs: string[] = [];
  if (trusted) {
    try {
      ({ writes, logs } = await runTrusted(trusted, inputs, outputs));
    } catch (error) {
      for (const line of logsOf(error)) context.log(line);
      throw error;
    }
  } else {
    const source = await services.scripts.get(codeFile);
    const limits = services.options.limits;
    // The script also stops at the step's deadline: a sandbox on this thread holds it, so neither
    // the step's timer nor the run's fires while the script runs.
    const { deadline } = context;
    const timeoutMs =
      deadline === undefined
        ? limits.scriptTimeoutMs
        : Math.max(1, Math.min(limits.scriptTimeoutMs, deadline - Date.now()));
    try {
      ({ writes, logs } = await services.sandbox.run({
        source,
        filename: codeFile,
        inputs,
        outputs,
        limits: {
          timeoutMs,
          memoryBytes: limits.scriptMemoryBytes,
          stackBytes: limits.scriptStackBytes,
          maxOutputBytes: limits.scriptOutputBytes,
        },
        signal: context.signal,
      }));
    } catch (error) {
      // What the script logged before it failed is in the record too.
      for (const line of logsOf(error)) context.log(line);
      await stopped(context);
      throw error;
    }
  }
  // Nothing is written once the step is stopped (its timeout, the run's time limit, a cancel).
  await stopped(context);
  for (const line of logs) context.log(line);
  const modes = new Map((atlas.output_entities ?? []).map((o) => [o.name, o.write_mode]));
  try {
    const result = await context.catalog.write(
      Object.entries(writes).map(([entity, rows]) => ({ entity, rows, mode: modes.get(entity) ?? 'append' })),
      { signal: context.signal, idempotencyKey: context.idempotencyKey },
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

/**
 * A data table given by reference as an input entity, checked as every data table is
 * ({@link tableShape}: named columns, none twice, no row longer than the columns). `columns` or
 * `rows` that are `null` (a read with no data) are empty. The rows are handed on as they are: one
 * pass over them, no copy. Throws a `ValidationError` naming every problem under `path`.
 */
function tableEntity(table: DataTable, path: string): EntityData {
  const columns: unknown = table.columns ?? [];
  const rows: unknown = table.rows ?? [];
  const shape = tableShape({ columns, rows });
  if (!shape.ok) throw new ValidationError(issuesUnder(shape.issues, path));
  const types = (columns as unknown[]).map((column) => {
    const type = typeof column === 'object' ? (column as { type?: unknown }).type : undefined;
    return typeof type === 'string' ? type : 'STRING';
  });
  return { columns: shape.value.map((name, c) => ({ name, type: types[c]! })), rows: rows as unknown[][] };
}

async function runTrusted(
  fn: (context: TransformContext) => void | Promise<void>,
  inputs: Record<string, EntityData>,
  outputs: readonly string[],
) {
  const writes = Object.create(null) as Record<string, EntityRows[number][]>;
  // Every output is written, with no rows when the function gives none, as a sandboxed script's is
  // (so `replace` empties an entity the function writes nothing to).
  for (const name of outputs) writes[name] = [];
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
      return rowObjectsOf(data);
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
      const added = entityRowsOf(rows, 'writeEntity.rows');
      const target = writes[name]!;
      // A copy: the function may go on changing its own array. Added one by one to an earlier
      // call's rows, since spreading a long array into push() overflows the call stack.
      if (target.length === 0) writes[name] = added.slice();
      else for (let i = 0; i < added.length; i++) target.push(added[i]!);
    },
    log(...values) {
      logs.push(values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' '));
    },
  };
  try {
    await fn(context);
  } catch (error) {
    // What the function logged before it threw goes into the step's record, as a script's does.
    throw typeof error === 'object' && error !== null ? keepLogs(error, logs) : error;
  }
  return { writes, logs };
}

/** How long to wait, past the deadline, for the step's signal to fire. */
const SIGNAL_GRACE_MS = 1000;

/**
 * Throws when the step is stopped: its signal fired, or its deadline has passed. Past the deadline,
 * it first waits (up to {@link SIGNAL_GRACE_MS}) for the signal, whose timer could not fire while a
 * script held the thread, so the step fails with the engine's own reason (the step's timeout, the
 * run's time limit).
 */
async function stopped(context: ActionContext): Promise<void> {
  const { signal, deadline } = context;
  if (!signal.aborted && deadline !== undefined && Date.now() >= deadline) {
    // Ends when the signal fires (rejecting) or after the grace.
    await sleep(SIGNAL_GRACE_MS, signal).catch(() => undefined);
    if (!signal.aborted) throw new LimitError('timeout_ms', 'the step ran past its deadline');
  }
  signal.throwIfAborted();
}
