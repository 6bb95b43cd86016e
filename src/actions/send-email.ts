import { LimitError, ValidationError, type Issue } from '../errors/index.js';
import { contentTypeOf } from '../adapters/content-type.js';
import type { MailAttachment, MailMessage } from '../adapters/mail/types.js';
import { decodeBase64 } from '../pdf/base64.js';
import { renderTexts } from '../pdf/text-template.js';
import type { PdfVariable } from '../pdf/types.js';
import { SendEmailInputSchema, type SendEmailOutput } from '../schema/index.js';
import type { ActionDefinition } from './registry.js';

/** Largest total of attachments, in bytes (most mail servers refuse messages over 25 MB). */
const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * `platform/email/send_email`: sends an e-mail through the engine's `mail` adapter, with the step's
 * idempotency key; files as `create_pdf` gives them (`file_data` base64). Output `{ message_id }`.
 */
export const sendEmailAction: ActionDefinition<typeof SendEmailInputSchema> = {
  provider: 'platform',
  module: 'email',
  action: 'send_email',
  description: 'Sends an e-mail, with attachments such as a PDF from create_pdf.',
  input: SendEmailInputSchema,
  run: async (input, context): Promise<SendEmailOutput> => {
    const mail = context.mail;
    if (!mail) throw new TypeError('send_email needs a mail adapter: new Engine({ mail })');
    let { subject, text, html } = input;
    if (input.template) {
      const rendered = renderTexts({ subject, text, html }, input.variables as PdfVariable[] | undefined, [
        'html',
      ]);
      subject = rendered.subject ?? subject;
      text = rendered.text;
      html = rendered.html;
    }
    const issues: Issue[] = [];
    let total = 0;
    const attachments: MailAttachment[] = [];
    (input.attachments ?? []).forEach((attachment, i) => {
      let data: Uint8Array;
      if (typeof attachment.file_data === 'string') {
        try {
          data = decodeBase64(attachment.file_data);
        } catch {
          issues.push({
            code: 'invalid_value',
            path: `attachments[${i}].file_data`,
            message: `attachments[${i}].file_data is not base64 (give the pdf_data of create_pdf, or bytes)`,
          });
          return;
        }
      } else data = attachment.file_data;
      total += data.length;
      attachments.push({
        file_name: attachment.file_name,
        content_type: contentTypeOf(attachment.file_type, attachment.file_name),
        data,
      });
    });
    if (text === undefined && html === undefined && attachments.length === 0)
      issues.push({
        code: 'required',
        path: 'text',
        message: 'send_email needs text, html or an attachment',
      });
    if (issues.length > 0) throw new ValidationError(issues);
    if (total > MAX_ATTACHMENT_BYTES)
      throw new LimitError(
        'mail.attachmentBytes',
        `the attachments hold ${total} bytes, more than ${MAX_ATTACHMENT_BYTES} (20 MiB) an e-mail may carry`,
      );
    const message: MailMessage = {
      to: list(input.to),
      cc: list(input.cc),
      bcc: list(input.bcc),
      subject,
      attachments,
    };
    if (input.reply_to !== undefined) message.reply_to = input.reply_to;
    if (text !== undefined) message.text = text;
    if (html !== undefined) message.html = html;
    const sent = await mail.send(message, { signal: context.signal, idempotencyKey: context.idempotencyKey });
    return { message_id: sent.messageId };
  },
};
