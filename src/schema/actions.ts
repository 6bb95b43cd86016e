import { z } from 'zod';
import { LONE_SURROGATE, holdsLoneSurrogate } from './well-formed.js';
import { WRITE_MODES } from './steps/atlas.js';
import { isDummyTaskInput } from './dummy-input.js';

/**
 * Variable value types of `create_pdf`: a `TABLE` value is a data table rendered into the document;
 * `LIST` (an array, for `[[#name]]` sections) and `OBJECT` (fields by dotted names).
 */
export const PDF_VALUE_TYPES = ['NUMBER', 'STRING', 'TABLE', 'BOOLEAN', 'DATE', 'LIST', 'OBJECT'] as const;

/** How a number or date prints: `Intl.NumberFormat` / `Intl.DateTimeFormat` options plus `locale`. */
export const ValueFormatSchema = z.looseObject({ locale: z.string().optional() });

/** A template variable: `create_pdf`'s, and those of `send_email` / `send_message` with `template: true`. */
export const TemplateVariableSchema = z.object({
  name: z.string().min(1),
  value_type: z.enum(PDF_VALUE_TYPES),
  value: z.unknown(),
  format: ValueFormatSchema.optional(),
  totals: z.array(z.string()).optional(),
});

/** Input of `platform/converters/create_pdf`: HTML whose `[[.name]]` markers take the variables' values. */
export const CreatePdfInputSchema = z.object({
  template: z.string(),
  template_type: z.literal('html').optional(),
  variables: z.array(TemplateVariableSchema).optional(),
});

/** Output of `create_pdf`: the PDF as base64. */
export const CreatePdfOutputSchema = z.object({ pdf_data: z.string() });

/** Input of `<file store>/files/upload_file`. `file_data` is base64 text or bytes. */
export const UploadFileInputSchema = z.object({
  file_data: z.union([z.string(), z.instanceof(Uint8Array)], {
    error: 'file_data must be base64 text or bytes',
  }),
  file_name: z
    .string()
    .min(1)
    .refine((name) => !holdsLoneSurrogate(name), `file_name ${LONE_SURROGATE}`),
  file_type: z.string().min(1).optional(),
  folder_id: z
    .string()
    .refine((folder) => !holdsLoneSurrogate(folder), `folder_id ${LONE_SURROGATE}`)
    .optional(),
});

/** Output of `upload_file`: where the file can be opened. */
export const UploadFileOutputSchema = z.object({ file_url: z.string() });

/** Input of `chat/bot/send_message`: the channel to post to and the text. */
export const SendMessageInputSchema = z.object({
  channel: z.string().min(1),
  message: z.string(),
  /** Renders `message` as a mustache template (`[[ ]]` tags) over `variables`. */
  template: z.boolean().optional(),
  variables: z.array(TemplateVariableSchema).optional(),
});

const MailAddressesSchema = z.union([z.string(), z.array(z.string())]);

/**
 * Input of `platform/email/send_email`: recipients (one address or a list each), subject, bodies and
 * files (`file_data` as `create_pdf` gives it: base64, or bytes). With `template: true`, subject, text
 * and html are mustache templates over `variables`.
 */
export const SendEmailInputSchema = z.object({
  to: MailAddressesSchema,
  cc: MailAddressesSchema.optional(),
  bcc: MailAddressesSchema.optional(),
  reply_to: z.string().optional(),
  subject: z.string(),
  text: z.string().optional(),
  html: z.string().optional(),
  attachments: z
    .array(
      z.object({
        file_name: z.string().min(1),
        file_type: z.string().min(1).optional(),
        file_data: z.union([z.string(), z.instanceof(Uint8Array)], {
          error: 'file_data must be base64 text or bytes',
        }),
      }),
    )
    .optional(),
  template: z.boolean().optional(),
  variables: z.array(TemplateVariableSchema).optional(),
});

/** Output of `send_email`: the id of the message sent. */
export const SendEmailOutputSchema = z.object({ message_id: z.string() });

/** Output of `send_message`. */
export const SendMessageOutputSchema = z.object({
  ok: z.boolean(),
  channel: z.string(),
  id: z.string().optional(),
});

/** Input of `platform/dummy/dummy_task`: any object. */
export const DummyTaskInputSchema = z.custom<Record<string, unknown>>(isDummyTaskInput, {
  message: 'input_data must be an object',
});

/**
 * Input of `platform/workflows/run_workflow`: the workflow to run as a child run and its input (`{}`
 * when absent), nothing else: a misspelt `input` would run the child on its defaults without a word.
 * The step's output is the child run's output.
 */
export const RunWorkflowInputSchema = z.strictObject({
  workflow_name: z.string().min(1),
  input: z.unknown().optional(),
});

/** A plain object (prototype `Object.prototype` or none) or an array. */
function isRow(value: unknown): value is Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * One row to write: a plain object keyed by column name, or an array in column order. Its shape is
 * checked here and the row is passed on as it is, not copied (a copy of 100,000 rows took longer than
 * writing them): the catalog checks every cell as it writes, naming the row and column.
 */
const WriteRowSchema = z
  .custom<Record<string, unknown> | unknown[]>(isRow, {
    error: 'each row must be an object keyed by column name or an array of values in column order',
  })
  .meta({
    anyOf: [
      { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} },
      { type: 'array', items: {} },
    ],
  });

/** Rows to write: objects keyed by column name, arrays in column order, or a data table. */
export const WriteRowsSchema = z.union(
  [
    z.array(WriteRowSchema, {
      error: 'rows must be an array of objects (or of arrays in column order)',
    }),
    z.object({
      columns: z.array(z.union([z.string(), z.object({ name: z.string() }).loose()])),
      rows: z.array(
        z
          .custom<unknown[]>(Array.isArray, { error: 'each row of a data table must be an array of values' })
          .meta({ type: 'array', items: {} }),
      ),
    }),
  ],
  { error: 'rows must be an array of objects, or a data table { columns, rows }' },
);

/**
 * Input of `catalog/action/write_entity`: rows written to one entity in a write mode (for
 * `delete`, the rows are keys: objects of the primary-key columns). Strict: an unknown property
 * (such as a misspelt `write_mode`) is refused, never ignored, since ignoring it would append.
 */
export const WriteEntityInputSchema = z.strictObject({
  entity_name: z.string().min(1),
  /** @default "append" */
  write_mode: z.enum(WRITE_MODES).optional(),
  rows: WriteRowsSchema,
});

/** Body of `POST /catalog/entities/{name}/rows`: a write mode and the rows; strict, as the input is. */
export const WriteRowsBodySchema = WriteEntityInputSchema.omit({ entity_name: true });

/** Output of `write_entity` (and answer of `POST /catalog/entities/{name}/rows`): rows written. */
export const WriteEntityOutputSchema = z.object({ written: z.number().int() });

/** Input of `write_entity`. */
export type WriteEntityInput = z.infer<typeof WriteEntityInputSchema>;
/** Body of `POST /catalog/entities/{name}/rows`. */
export type WriteRowsBody = z.input<typeof WriteRowsBodySchema>;
/** Rows to write: objects, arrays in column order, or a data table. */
export type WriteRows = z.infer<typeof WriteRowsSchema>;

/** Input of `create_pdf`. */
export type CreatePdfInput = z.infer<typeof CreatePdfInputSchema>;
/** Input of `upload_file`. */
export type UploadFileInput = z.infer<typeof UploadFileInputSchema>;
/** Input of `send_message`. */
export type SendMessageInput = z.infer<typeof SendMessageInputSchema>;
/** Input of `run_workflow`. */
export type RunWorkflowInput = z.infer<typeof RunWorkflowInputSchema>;
/** Output of `send_message`. */
export type SendMessageOutput = z.infer<typeof SendMessageOutputSchema>;
/** Input of `send_email`. */
export type SendEmailInput = z.infer<typeof SendEmailInputSchema>;
/** Output of `send_email`. */
export type SendEmailOutput = z.infer<typeof SendEmailOutputSchema>;
