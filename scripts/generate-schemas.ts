/**
 * Generates `schemas/<resource>.json` (JSON Schema draft 2020-12, from the zod schemas in src/schema)
 * and `types/<resource>.d.ts` (from those JSON files, with json-schema-to-typescript).
 *
 * Run with `npm run generate` (or `npx tsx scripts/generate-schemas.ts`). `test/schema/generated.test.ts`
 * fails when the committed files differ from what this script produces.
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import * as prettier from 'prettier';
import { z } from 'zod';
import {
  ApplicationSchema,
  CreatePdfInputSchema,
  DataTableSchema,
  EntitySchema,
  GetEntityInputSchema,
  GetEntityOutputSchema,
  RelationshipSchema,
  RunWorkflowInputSchema,
  SendMessageInputSchema,
  SendEmailInputSchema,
  UploadFileInputSchema,
  WorkflowSchema,
  WriteEntityInputSchema,
} from '../src/schema/index.js';
import { ProjectSettingsSchema } from '../src/node/project-settings.js';
import { AccessPolicySchema } from '../src/schema/access.js';

/** Root of the repository. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Base of every `$id`: where the published package serves its schemas. */
const ID_BASE = 'https://unpkg.com/stepwire/schemas/';

/** One generated resource: its file name, type name, description and zod schema. */
export interface Resource {
  /** File name without extension, e.g. `get-entity-input`. */
  file: string;
  /** `title` of the JSON Schema and name of the generated TypeScript type. */
  title: string;
  /** One line describing the resource. */
  description: string;
  /** The zod schema it is generated from. */
  schema: z.ZodType;
}

/** Every resource with a generated JSON Schema and type. */
export const RESOURCES: readonly Resource[] = [
  {
    file: 'entity',
    title: 'Entity',
    description: 'An entity registration body: its columns, primary key and the sheet its rows live in.',
    schema: EntitySchema,
  },
  {
    file: 'relationship',
    title: 'Relationship',
    description: 'A relationship between two entities.',
    schema: RelationshipSchema,
  },
  {
    file: 'workflow',
    title: 'Workflow',
    description: 'A workflow definition: steps, wires, input and output.',
    schema: WorkflowSchema,
  },
  {
    file: 'application',
    title: 'Application',
    description: 'An application configuration: screens of components.',
    schema: ApplicationSchema,
  },
  {
    file: 'get-entity-input',
    title: 'GetEntityInput',
    description: 'Input of the get_entity action.',
    schema: GetEntityInputSchema,
  },
  {
    file: 'get-entity-output',
    title: 'GetEntityOutput',
    description: 'Output of the get_entity action.',
    schema: GetEntityOutputSchema,
  },
  {
    file: 'data-table',
    title: 'DataTable',
    description: 'A data table: the result of entity reads.',
    schema: DataTableSchema,
  },
  {
    file: 'create-pdf-input',
    title: 'CreatePdfInput',
    description: 'Input of platform/converters/create_pdf.',
    schema: CreatePdfInputSchema,
  },
  {
    file: 'upload-file-input',
    title: 'UploadFileInput',
    description: 'Input of <file store>/files/upload_file.',
    schema: UploadFileInputSchema,
  },
  {
    file: 'write-entity-input',
    title: 'WriteEntityInput',
    description: 'Input of catalog/action/write_entity.',
    schema: WriteEntityInputSchema,
  },
  {
    file: 'send-message-input',
    title: 'SendMessageInput',
    description: 'Input of chat/bot/send_message.',
    schema: SendMessageInputSchema,
  },
  {
    file: 'send-email-input',
    title: 'SendEmailInput',
    description: 'Input of platform/email/send_email.',
    schema: SendEmailInputSchema,
  },
  {
    file: 'run-workflow-input',
    title: 'RunWorkflowInput',
    description: 'Input of platform/workflows/run_workflow.',
    schema: RunWorkflowInputSchema,
  },
  {
    file: 'project-settings',
    title: 'ProjectSettings',
    description: 'stepwire.json: the settings of a project folder, read by every stepwire command.',
    schema: ProjectSettingsSchema,
  },
  {
    file: 'access',
    title: 'AccessPolicy',
    description: 'access.json: the access policy of a project (roles and grants, row rules, column rules).',
    schema: AccessPolicySchema,
  },
];

/** The JSON Schema of one resource, with `$id`, `title` and `description` first. */
export function jsonSchemaOf(resource: Resource): Record<string, unknown> {
  const generated = z.toJSONSchema(resource.schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: `${ID_BASE}${resource.file}.json`,
    title: resource.title,
    description: resource.description,
    ...rest,
  };
}

async function format(text: string, file: string, parser: 'json' | 'typescript'): Promise<string> {
  const config = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...config, parser });
}

/** Every generated file, as repository-relative path -> content, in a stable order. */
export async function generate(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const resource of RESOURCES) {
    const schema = jsonSchemaOf(resource);
    const jsonPath = `schemas/${resource.file}.json`;
    files.set(jsonPath, await format(JSON.stringify(schema, null, 2), join(ROOT, jsonPath), 'json'));
    const banner = `/**\n * Generated by scripts/generate-schemas.ts from ${jsonPath}; do not edit.\n * Run \`npm run generate\` after changing src/schema.\n */`;
    const source = await compile(schema as JSONSchema, resource.title, {
      bannerComment: banner,
      additionalProperties: false,
      format: false,
      unknownAny: true,
      ignoreMinAndMaxItems: true,
      cwd: join(ROOT, 'schemas'),
    });
    const typesPath = `types/${resource.file}.d.ts`;
    files.set(typesPath, await format(source, join(ROOT, typesPath), 'typescript'));
  }
  return files;
}

async function main(): Promise<void> {
  const files = await generate();
  for (const [path, content] of files) {
    const target = join(ROOT, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  }
  console.log(`wrote ${files.size} files: ${[...files.keys()].join(', ')}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
