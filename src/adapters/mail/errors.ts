import { StepwireError, type StepwireErrorOptions } from '../../errors/index.js';

/**
 * The message was handed to the mail server or provider, and then the answer was lost (connection
 * closed, time out): it may have been sent or not. Code `outcome_unknown`; never retried, so the
 * message is not sent twice. Check the mailbox or the provider's log before sending it again.
 */
export class MailOutcomeUnknownError extends StepwireError {
  /** Always `"MailOutcomeUnknownError"`, so guards also work across package copies. */
  override name = 'MailOutcomeUnknownError';
  constructor(message: string, options?: StepwireErrorOptions) {
    super('outcome_unknown', message, options);
  }
}
