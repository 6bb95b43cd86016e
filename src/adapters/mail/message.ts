import { ValidationError, type Issue } from '../../errors/index.js';
import type { MailMessage } from './types.js';

/** `local@domain`: the dot-atom characters of RFC 5322 and a domain of at least two labels. */
const BARE =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~\u0080-\uffff-]+@(?:[A-Za-z0-9\u0080-\uffff](?:[A-Za-z0-9\u0080-\uffff-]{0,61}[A-Za-z0-9\u0080-\uffff])?\.)+[A-Za-z\u0080-\uffff][A-Za-z0-9\u0080-\uffff-]*$/;
/** `Display Name <local@domain>`, the name optionally quoted. */
const NAMED = /^\s*("(?:[^"\\]|\\.)*"|[^<>"]*?)\s*<([^<>\s]+)>\s*$/;
// eslint-disable-next-line no-control-regex -- control characters are what is refused
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const BREAK = /[\r\n\u2028\u2029\u0085]/;

/** Issues of one header value: CR, LF (header injection) or another control character. @internal */
export function headerIssue(value: string, path: string): Issue | undefined {
  if (BREAK.test(value))
    return {
      code: 'header_injection',
      path,
      message: `${path} holds a line break (CR or LF); a header value is one line, so it is refused`,
    };
  if (CONTROL.test(value))
    return { code: 'invalid_value', path, message: `${path} holds a control character` };
  return undefined;
}

/** Issues of one address (`a@b.example` or `Name <a@b.example>`). @internal */
export function addressIssue(value: unknown, path: string): Issue | undefined {
  if (typeof value !== 'string' || value.trim() === '')
    return { code: 'invalid_type', path, message: `${path} must be an e-mail address` };
  const header = headerIssue(value, path);
  if (header) return header;
  if (value.length > 998) return { code: 'too_long', path, message: `${path} is longer than 998 characters` };
  const named = NAMED.exec(value);
  const address = named ? named[2]! : value.trim();
  if (!BARE.test(address) || address.length > 254 || address.split('@')[0]!.length > 64)
    return {
      code: 'invalid_address',
      path,
      message: `${path} ${JSON.stringify(value)} is not an e-mail address (user@example.com or Name <user@example.com>)`,
    };
  return undefined;
}

/**
 * Checks a message before any adapter sees it: at least one recipient, every address well formed,
 * no CR/LF in subject, addresses, file names or types, a body or an attachment.
 * @throws ValidationError listing every issue, each naming its field.
 * @internal
 */
export function checkMailMessage(message: MailMessage): void {
  const issues: Issue[] = [];
  const add = (issue: Issue | undefined): void => void (issue && issues.push(issue));
  if (message.from !== undefined) add(addressIssue(message.from, 'from'));
  for (const field of ['to', 'cc', 'bcc'] as const)
    message[field].forEach((address, i) => add(addressIssue(address, `${field}[${i}]`)));
  if (message.to.length + message.cc.length + message.bcc.length === 0)
    issues.push({ code: 'required', path: 'to', message: 'to needs at least one address' });
  if (message.reply_to !== undefined) add(addressIssue(message.reply_to, 'reply_to'));
  if (typeof message.subject !== 'string')
    issues.push({ code: 'invalid_type', path: 'subject', message: 'subject must be a string' });
  else add(headerIssue(message.subject, 'subject'));
  message.attachments.forEach((attachment, i) => {
    add(headerIssue(attachment.file_name, `attachments[${i}].file_name`));
    add(headerIssue(attachment.content_type, `attachments[${i}].file_type`));
    if (!/^[\w.+-]+\/[\w.+-]+$/.test(attachment.content_type))
      issues.push({
        code: 'invalid_value',
        path: `attachments[${i}].file_type`,
        message: `attachments[${i}].file_type ${JSON.stringify(attachment.content_type)} is not a MIME type`,
      });
  });
  if (issues.length > 0) throw new ValidationError(issues);
}
