import type { StepOf, WaitData } from '../../schema/index.js';
import type { StepType } from './types.js';
import { WaitBook, describeWait, type WaitRecord } from '../waits/wait-book.js';
import { Waiting } from '../waits/waiting.js';
import type { StorageAdapter } from '../../adapters/types.js';
import { checkMailMessage } from '../../adapters/mail/message.js';

/** One book per storage: a step needs no more than the storage it keeps its waits in. */
const books = new WeakMap<StorageAdapter, WaitBook>();

/** The wait book over a storage. @internal */
export function waitBookOf(storage: StorageAdapter): WaitBook {
  let book = books.get(storage);
  if (!book) books.set(storage, (book = new WaitBook(storage)));
  return book;
}

/**
 * The `wait` step type: begins the step's wait (or finds it begun) and, until an answer, an event
 * or the time ends it, hands the runner a {@link Waiting} instead of an output; the run then waits
 * holding no worker, and the step runs again when the wait ends. @internal
 */
export const WAIT_STEP: StepType<StepOf<'wait'>> = {
  plan(step) {
    return { data: { path: 'wait_data', value: step.wait_data }, issues: [] };
  },

  async run(_planned, data, context, services) {
    const { id, workflow, step, item } = context.run;
    const state = await waitBookOf(services.storage).begin({
      run_id: id,
      workflow,
      step,
      item,
      initiator: services.initiator,
      data: data as WaitData,
    });
    if (state.end) {
      if ('failure' in state.end) throw state.end.failure;
      return state.end.output;
    }
    const wait = data as WaitData;
    if (state.created && wait.kind === 'approval' && wait.notify) {
      const { title, link } = notice(state.record, services.options.publicUrl);
      const text = `Approval needed: ${title} (${link})`;
      // Sent once, when the wait begins; the key lets an adapter tell a repeat.
      const idempotencyKey = `notify ${state.record.id}`;
      if (wait.notify.chat)
        await context.chat.send({ channel: wait.notify.chat.channel, message: text }, { idempotencyKey });
      if (wait.notify.email) {
        const to = wait.notify.email.to;
        const message = {
          to: Array.isArray(to) ? to : [to],
          cc: [],
          bcc: [],
          subject: `Approval needed: ${title}`,
          text: `${text}\n\nOpen the link to approve or reject.`,
          attachments: [],
        };
        checkMailMessage(message);
        await services.options.mail.send(message, { idempotencyKey, signal: context.signal });
      }
    }
    context.log(
      `waiting: ${describeWait(state.record)}${state.record.due_at ? ` until ${state.record.due_at}` : ''}`,
    );
    return new Waiting(state.record);
  },

  outputSchema(step, path) {
    const schema = OUTPUT_SCHEMAS[step.wait_data.kind];
    let at: Record<string, unknown> | undefined = schema;
    for (const key of path) {
      const properties = at?.['properties'] as Record<string, Record<string, unknown>> | undefined;
      at = properties?.[key];
      if (!at) return undefined;
    }
    return at;
  },
};

/** An approval's title and the link to its page (absolute with the engine's `publicUrl`). */
function notice(record: WaitRecord, publicUrl: string | undefined): { title: string; link: string } {
  const path = `/approvals/${record.id}`;
  return {
    title: (record.approval?.title ?? record.step).replace(/[\r\n]+/g, ' '),
    link: publicUrl ? `${publicUrl.replace(/\/+$/, '')}${path}` : path,
  };
}

const DECISION = {
  type: 'object',
  properties: {
    by: { type: 'string' },
    at: { type: 'string' },
    approved: { type: 'boolean' },
    comment: { type: 'string' },
    data: {},
  },
};

/** The outputs of each kind of wait. */
const OUTPUT_SCHEMAS: Record<WaitData['kind'], Record<string, unknown>> = {
  approval: {
    type: 'object',
    properties: {
      approved: { type: 'boolean' },
      decisions: { type: 'array', items: DECISION },
      timed_out: { type: 'boolean' },
    },
  },
  event: { type: 'object', properties: { payload: {}, timed_out: { type: 'boolean' } } },
  timer: { type: 'object', properties: { waited_seconds: { type: 'number' } } },
};
