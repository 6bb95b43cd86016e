import { ValidationError } from '../../errors/index.js';
import type { ActionContext } from '../../actions/registry.js';
import type { AtlasData, DataTable, StepOf } from '../../schema/index.js';
import { findReferences, isWholeReference } from '../../schema/index.js';
import type { RunServices } from '../plan-types.js';
import { runTransform, type InputEntity } from './atlas-transform.js';
import type { StepType } from './types.js';

/**
 * The `atlas` step type: `get` reads one entity, `transform` runs a script over entities and writes
 * its rows to the output entities. @internal
 */
export const ATLAS_STEP: StepType<StepOf<'atlas'>> = {
  plan(step) {
    return { data: { path: 'atlas_data', value: step.atlas_data } };
  },

  async run(planned, data, context, services) {
    const atlas = data as AtlasData;
    const inputs = inputEntities(planned.step.atlas_data, atlas);
    return atlas.action === 'get'
      ? runGet(inputs, atlas, context, services)
      : runTransform(inputs, atlas, context, services);
  },
};

/** The input entities of an atlas step, from the data as written and as resolved. */
function inputEntities(raw: AtlasData, resolved: AtlasData): InputEntity[] {
  return (resolved.input_entities ?? []).map((item, i) => {
    const written = raw.input_entities?.[i];
    if (typeof item === 'object' && item !== null && 'columns' in item && 'rows' in item) {
      // A reference that resolved to a table: it is known by the step it came from.
      const root =
        typeof written === 'string' && isWholeReference(written)
          ? findReferences(written)[0]!.expression.split(/[.[]/)[0]!
          : `input_${i}`;
      return { name: root, table: item as DataTable, index: i };
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
  inputs: InputEntity[],
  atlas: AtlasData,
  context: ActionContext,
  services: RunServices,
): Promise<unknown> {
  const [entity] = inputs;
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
