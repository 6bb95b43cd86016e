export type { MailAdapter, MailAttachment, MailMessage, SentMail } from './types.js';
export { MailOutcomeUnknownError } from './errors.js';
export { HttpMail, type HttpMailOptions } from './http.js';
