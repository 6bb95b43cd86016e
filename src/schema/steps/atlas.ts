import { z } from 'zod';
import { addIssue } from '../issues.js';
import { OperationSchema } from '../get-entity.js';
import { defineStepSchema } from './base.js';
import { repeatedOutputs } from './output-entities.js';

/**
 * How rows are written to an entity: `append` adds rows, `replace` replaces every row, `upsert`
 * updates rows by primary key and appends the new keys, `update` changes rows by key (every key must
 * exist), `delete` removes the rows of the given keys.
 */
export const WRITE_MODES = ['append', 'replace', 'upsert', 'update', 'delete'] as const;

/** A write mode: see {@link WRITE_MODES}. */
export type WriteMode = (typeof WRITE_MODES)[number];

/** An input entity of an `atlas` step: `{ name }` or a plain string (a name or a reference). */
export const InputEntitySchema = z.union([z.object({ name: z.string().min(1) }), z.string().min(1)], {
  error: 'each input entity must be an object with a name, or a string',
});

/** An output entity of a `transform` step. */
export const OutputEntitySchema = z.object({
  name: z.string().min(1),
  write_mode: z.enum(WRITE_MODES),
});

/**
 * `atlas_data`: `action: "get"` reads one input entity; `action: "transform"` runs the JavaScript script
 * named by `input_data.code_file` over the input entities and writes its rows to the output entities.
 */
export const AtlasDataSchema = z
  .object({
    action: z.enum(['transform', 'get']),
    input_data: z
      .object({
        language: z.string().optional(),
        code_file: z.string().min(1).optional(),
        operation: OperationSchema.optional(),
        page_size: z.number().int().min(1).optional(),
        page_number: z.number().int().min(1).optional(),
      })
      .optional(),
    input_entities: z.array(InputEntitySchema).optional(),
    output_entities: z.array(OutputEntitySchema).optional(),
  })
  .superRefine((atlas, ctx) => {
    if (atlas.action === 'transform') {
      if (!atlas.input_data?.code_file)
        addIssue(
          ctx,
          ['input_data', 'code_file'],
          'a transform needs input_data.code_file, the name of its script',
          'required',
        );
      const language = atlas.input_data?.language;
      if (language !== undefined && !['javascript', 'js'].includes(language.toLowerCase())) {
        addIssue(
          ctx,
          ['input_data', 'language'],
          `language "${language}" is not supported; use "javascript"`,
          'invalid_value',
        );
      }
      if (!atlas.output_entities || atlas.output_entities.length === 0) {
        addIssue(ctx, ['output_entities'], 'a transform needs at least one output entity', 'required');
      }
      for (const repeat of repeatedOutputs(atlas.output_entities ?? []))
        addIssue(ctx, ['output_entities', repeat.index, 'name'], repeat.message, 'repeated_entity');
    } else {
      if (!atlas.input_entities || atlas.input_entities.length !== 1) {
        addIssue(ctx, ['input_entities'], 'a get step reads exactly one input entity', 'invalid');
      }
    }
  });

/** An `atlas` step: reads an entity (`get`) or runs a transform script over entities (`transform`). */
export const AtlasStepSchema = defineStepSchema('atlas', AtlasDataSchema);

/** `atlas_data` of a step. */
export type AtlasData = z.infer<typeof AtlasDataSchema>;
