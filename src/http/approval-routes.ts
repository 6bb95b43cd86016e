import { z } from 'zod';
import type { Approval } from '../engine/waits/approvals.js';
import { NotFoundError, StepwireError, ValidationError, isForbiddenError } from '../errors/index.js';
import { renderMessagePage } from '../app/render.js';
import { decisionFromForm, renderApproval, renderInbox, type PageAccess } from './approval-pages.js';
import { html, readForm } from './screens.js';
import { defineRoute, json, type RouteContext } from './route.js';

const MAX_FORM_BYTES = 256 * 1024;

const DecisionSchema = z.strictObject({
  by: z.string().describe('Who decided: a principal id, or `link:<e-mail>` for an outside approver.'),
  name: z.string().optional().describe('Their name or e-mail address, when known.'),
  at: z.string(),
  approved: z.boolean(),
  comment: z.string().optional(),
  data: z.unknown().optional().describe("Answers to the approval's form."),
});

const ApprovalSchema = z.strictObject({
  id: z.string(),
  status: z.enum(['waiting', 'approved', 'rejected', 'timed_out']),
  run_id: z.string(),
  workflow: z.string(),
  step: z.string(),
  item: z.number().int().optional(),
  title: z.string(),
  description: z.string().optional(),
  assignees: z.strictObject({ roles: z.array(z.string()).optional(), users: z.array(z.string()).optional() }),
  required: z.number().int(),
  form: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('JSON Schema of the answers a decision carries.'),
  show: z.record(z.string(), z.unknown()).optional().describe('Values the step shows, by label.'),
  self_approval: z.boolean(),
  initiator: z
    .strictObject({
      id: z.string(),
      kind: z.enum(['user', 'key', 'service']),
      roles: z.array(z.string()),
      email: z.string().optional(),
    })
    .optional(),
  decisions: z.array(DecisionSchema),
  began_at: z.string(),
  due_at: z.string().optional(),
  resolved_at: z.string().optional(),
});

const idParam = z.object({ id: z.string().describe('Approval id') });
const page = (description: string) => ({ description, media: 'text/html' as const });

/** Routes of approvals (human steps) and events. @internal */
export const APPROVAL_ROUTES = [
  defineRoute({
    method: 'GET',
    path: '/approvals',
    name: 'approvals.list',
    summary: 'List the approvals waiting for you',
    description:
      'The approvals of `wait` steps that the caller may decide (one of their `assignees`), oldest first. A browser (asking for `text/html`) gets the inbox page instead.',
    responses: { 200: { description: 'The approvals.', schema: z.array(ApprovalSchema) } },
    problems: [],
    action: async (context) => {
      const approvals = await context.engine.approvals.list();
      if (!wantsHtml(context.request)) return json(200, approvals);
      return html(200, renderInbox(approvals, base(context), access(context)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/approvals/{id}',
    name: 'approvals.get',
    summary: 'Read an approval',
    description:
      'An approval the caller may decide, or of a run it may read: its title, what the step shows, its decisions. A browser gets its page, with the decision form while it waits. Reading it decides nothing.',
    params: idParam,
    responses: { 200: { description: 'The approval.', schema: ApprovalSchema } },
    problems: [404],
    action: async (context) => {
      const approval = await context.engine.approvals.get(context.params.id);
      if (!wantsHtml(context.request)) return json(200, approval);
      return html(200, renderApproval(approval, base(context), access(context)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/approvals/{id}/decision',
    name: 'approvals.decide',
    summary: 'Decide an approval',
    description:
      "Approves or rejects: the first rejection, or the last approval needed, ends the wait and the run goes on. Only an assignee may decide, and the run's starter only when the step allows self-approval. 409 when the approval has ended or the caller decided it already; 422 naming the field of a bad decision (`data` is checked against the step's form).",
    params: idParam,
    body: {
      media: 'json',
      required: true,
      validate: true,
      description: '`{ approved, comment?, data? }`.',
      schema: z.strictObject({
        approved: z.boolean(),
        comment: z.string().max(10_000).optional(),
        data: z.unknown().optional(),
      }),
    },
    responses: { 200: { description: 'The approval after the decision.', schema: ApprovalSchema } },
    problems: [400, 404, 409, 413, 415, 422],
    action: async ({ engine, params, body }) => {
      const decision = await body();
      return json(200, await engine.approvals.decide(params.id, withoutUndefined(decision)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/approvals/{id}/decide',
    name: 'approvals.decideForm',
    summary: 'Decide an approval from its page',
    description:
      "The approval page's form: `decision` (`approve` or `reject`), `comment`, `data.<field>`, and the session's form token. Answers 303 back to the page, or the page again (422) saying what is wrong.",
    params: idParam,
    body: {
      media: 'form',
      required: true,
      schema: z.record(z.string(), z.string()),
      description: 'The form.',
    },
    responses: {
      303: { description: 'Decided: back to the page.', headers: { Location: 'The approval page.' } },
      422: page('The page again, saying what is wrong.'),
    },
    problems: [403, 404, 409, 413, 415],
    action: async (context) => {
      const values = await readForm(context.request, MAX_FORM_BYTES);
      if (values instanceof Response) return values;
      const session = context.identity.session;
      if (session && values['_csrf'] !== session.csrf)
        return html(
          403,
          renderMessagePage(
            'Forbidden',
            'This form is not one this server gave you; open the approval again.',
          ),
        );
      const approvals = context.engine.approvals;
      return pageDecision(context, await approvals.get(context.params.id), values, access(context), (d) =>
        approvals.decide(context.params.id, d),
      );
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/approvals/{id}/respond',
    name: 'approvals.linkPage',
    public: true,
    summary: "An outside approver's page",
    description:
      'The page a single-use approval link opens, without an account. Opening it (GET or HEAD, as a mail scanner does) decides nothing; a link that is wrong, expired or used answers 404.',
    params: idParam,
    query: z.strictObject({ token: z.string().min(1).max(200).describe("The link's token.") }),
    responses: { 200: page('The approval page with its form.'), 404: page('No such link.') },
    problems: [400],
    action: async (context) => {
      const { token } = context.query();
      try {
        const { approval } = await context.host.approvalLinks().withLink(context.params.id, token);
        return html(200, renderApproval(approval, base(context), { token }));
      } catch (error) {
        return pageError(error);
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/approvals/{id}/respond',
    name: 'approvals.linkDecide',
    public: true,
    summary: 'Decide with a single-use link',
    description:
      "The link page's form: `token`, `decision` (`approve` or `reject`), `comment`, `data.<field>`. The decision is recorded as `link:<e-mail>`; the link then stops working. Answers the page again.",
    params: idParam,
    body: {
      media: 'form',
      required: true,
      schema: z.record(z.string(), z.string()),
      description: 'The form.',
    },
    responses: {
      200: page('Decided: the page again, showing it.'),
      404: page('No such link (wrong, expired or used).'),
      422: page('The page again, saying what is wrong.'),
    },
    problems: [403, 409, 413, 415],
    action: async (context) => {
      const values = await readForm(context.request, MAX_FORM_BYTES);
      if (values instanceof Response) return values;
      const token = values['token'] ?? '';
      const links = context.host.approvalLinks();
      try {
        const { approval } = await links.withLink(context.params.id, token);
        const answer = await pageDecision(context, approval, values, { token }, (d) =>
          links.decideWithLink(context.params.id, token, d),
        );
        if (answer.status !== 303) return answer;
        const decided = await context.host.approvals.get(context.params.id);
        return html(200, renderApproval(decided, base(context), {}, []));
      } catch (error) {
        return pageError(error);
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/approvals/{id}/link',
    name: 'approvals.link',
    summary: 'Make a link for an outside approver',
    description:
      "A single-use, expiring link (default 7 days, at most 90) to the approval's page, usable without an account; the decision made with it is recorded as `link:<email>`. Only an assignee may make one. The token is shown this once.",
    params: idParam,
    body: {
      media: 'json',
      required: true,
      validate: true,
      description: '`{ email, expires? }`.',
      schema: z.strictObject({
        email: z.string(),
        expires: z.string().optional().describe('When the link stops working (ISO date-time).'),
      }),
    },
    responses: {
      201: {
        description: 'The link.',
        schema: z.strictObject({
          path: z.string().describe("The page's path with the token: prefix it with the server's URL."),
          url: z.string().optional().describe('The whole URL, when the server knows its public URL.'),
          token: z.string(),
          email: z.string(),
          expires_at: z.string(),
        }),
      },
    },
    problems: [400, 404, 409, 413, 415, 422],
    action: async ({ engine, params, body, options, request }) => {
      const input = await body();
      const link = await engine.approvals.link(params.id, withoutUndefined(input));
      const path = `${options.basePath}${link.path}`;
      const origin = options.publicOrigin ?? new URL(request.url).origin;
      return json(201, { ...link, path, url: `${origin}${path}` });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/events/{event}',
    name: 'events.send',
    summary: 'Send an event',
    description:
      "Ends every `wait` step waiting for this event whose `match` the payload has (their runs go on); when none waits, the event is kept 24 hours for a wait that begins later. The body is the payload. Needs `events.send` on the event's name.",
    params: z.object({ event: z.string().describe('Event name, e.g. `payment.received`.') }),
    body: { media: 'json', required: false, description: 'The payload (any JSON).', schema: z.unknown() },
    responses: {
      200: {
        description: 'Sent.',
        schema: z.strictObject({
          id: z.string().describe("The event's id."),
          resumed: z.array(z.string()).describe('Runs whose waits it ended.'),
        }),
      },
    },
    problems: [400, 413, 415, 422],
    action: async ({ engine, params, body }) =>
      json(200, await engine.events.send(params.event, await body())),
  }),
] as const;

/** Decides from a page's form; 303 back to the page, or the page again with what is wrong. */
async function pageDecision(
  context: RouteContext<{ id: string }>,
  approval: Approval,
  values: Record<string, string>,
  pageAccess: PageAccess,
  decide: (decision: { approved: boolean; comment?: string; data?: unknown }) => Promise<Approval>,
): Promise<Response> {
  const decision = decisionFromForm(values, approval.form);
  if (typeof decision === 'string')
    return html(422, renderApproval(approval, base(context), pageAccess, [decision]));
  try {
    await decide(decision);
  } catch (error) {
    if (error instanceof ValidationError)
      return html(
        422,
        renderApproval(
          approval,
          base(context),
          pageAccess,
          error.issues.map((i) => i.message),
        ),
      );
    if (error instanceof StepwireError && error.code === 'conflict')
      return html(409, renderApproval(approval, base(context), pageAccess, [error.message]));
    throw error;
  }
  const location = `${base(context)}/approvals/${encodeURIComponent(approval.id)}`;
  return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } });
}

function pageError(error: unknown): Response {
  if (error instanceof NotFoundError)
    return html(404, renderMessagePage('Not found', 'This link is wrong, has expired or has been used.'));
  if (isForbiddenError(error)) return html(403, renderMessagePage('Forbidden', error.message));
  if (error instanceof StepwireError && error.code === 'conflict')
    return html(409, renderMessagePage('Already decided', error.message));
  throw error;
}

/** Whether a browser asks for a page: `text/html` accepted before JSON. */
function wantsHtml(request: Request): boolean {
  const accept = request.headers.get('accept') ?? '';
  const htmlAt = accept.indexOf('text/html');
  if (htmlAt < 0) return false;
  const jsonAt = accept.indexOf('application/json');
  return jsonAt < 0 || htmlAt < jsonAt;
}

function base(context: RouteContext<unknown>): string {
  return context.options.basePath;
}

function access(context: RouteContext<unknown>): PageAccess {
  const session = context.identity.session;
  if (!session) return {};
  const who = session.principal.name ?? session.principal.email ?? session.principal.id;
  return { session: { csrf: session.csrf, who } };
}

/** An object without its `undefined` values (a left-out field is absent). */
function withoutUndefined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}
