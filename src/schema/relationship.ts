import { z } from 'zod';
import { addIssue } from './issues.js';
import { NameSchema } from './entity.js';
import { ResourceNameSchema } from './resource-name.js';

/** Relationship types supported: only `foreign_key`. */
export const RELATIONSHIP_TYPES = ['foreign_key'] as const;

/** A relationship between two entities. */
export const RelationshipSchema = z
  .object({
    name: ResourceNameSchema,
    relationship_type: z.enum(RELATIONSHIP_TYPES),
    source_entity: NameSchema,
    target_entity: NameSchema,
    foreign_key_config: z.object({
      source_columns: z.array(z.string().min(1)).min(1),
      target_columns: z.array(z.string().min(1)).min(1),
      enforce_foreign_key: z.boolean(),
    }),
  })
  .superRefine((rel, ctx) => {
    const { source_columns, target_columns } = rel.foreign_key_config;
    if (source_columns.length !== target_columns.length) {
      addIssue(
        ctx,
        ['foreign_key_config', 'target_columns'],
        `source_columns has ${source_columns.length} column(s) but target_columns has ${target_columns.length}; the lists must be of equal length`,
        'length_mismatch',
      );
    }
  });

/** A relationship definition. */
export type Relationship = z.infer<typeof RelationshipSchema>;
/** A relationship definition as written: what `engine.catalog.createRelationship` takes. */
export type RelationshipBody = z.input<typeof RelationshipSchema>;
