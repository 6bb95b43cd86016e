/**
 * Approvals and events: what people and outside systems answer waits with. Who may decide an
 * approval is the step's `assignees` (roles or users); the run's own starter only with
 * `self_approval`. Every decision is in the audit log; a decision or event that ends a wait makes
 * the run go on.
 * @module
 */
import { ForbiddenError, NotFoundError, StepwireError, ValidationError } from '../../errors/index.js';
import type { Principal } from '../../access/principal.js';
import type { Grants } from '../../access/grants.js';
import type { AuditLog, AuditRecord } from '../../access/audit.js';
import type { StorageAdapter } from '../../adapters/types.js';
import type { ApprovalWait } from '../../schema/index.js';
import type { RunInitiator } from '../../schema/run-record-types.js';
import { compileSchema } from '../../json-schema/index.js';
import { hexOf, sha256 } from '../../bytes/hex.js';
import { describeValue } from '../../schema/issues.js';
import { EventWaitSchema } from '../../schema/steps/wait.js';
import { endOf, type Decision, type WaitBook, type WaitEnd, type WaitRecord } from './wait-book.js';

/** Where an approval is: waiting, or how it ended. */
export type ApprovalStatus = 'waiting' | 'approved' | 'rejected' | 'timed_out';

/** An approval: a `wait` step of kind `approval` of a run, and its decisions so far. */
export interface Approval {
  /** Its id, as in `GET /approvals/{id}`. */
  id: string;
  status: ApprovalStatus;
  run_id: string;
  workflow: string;
  step: string;
  /** The item of a `for_each` step it belongs to. */
  item?: number;
  title: string;
  description?: string;
  assignees: ApprovalWait['assignees'];
  /** Approvals needed; one rejection ends it. */
  required: number;
  /** JSON Schema of the answers a decision carries in `data`. */
  form?: Record<string, unknown>;
  /** Values the step shows the approver, by label. */
  show?: Record<string, unknown>;
  /** Whether the run's starter may decide. */
  self_approval: boolean;
  /** Who started the run. */
  initiator?: RunInitiator;
  decisions: Decision[];
  began_at: string;
  /** When it times out, if it does. */
  due_at?: string;
  resolved_at?: string;
}

/** A decision on an approval. */
export interface DecisionInput {
  approved: boolean;
  /** Why, in a few words (at most 10,000 characters). */
  comment?: string;
  /** Answers to the approval's `form`, validated against it. */
  data?: unknown;
}

/** A link for an outside approver: single-use, expiring, usable without an account. */
export interface ApprovalLink {
  /** The path of the approval's page with the link's token (prefix it with the server's URL). */
  path: string;
  /** The token alone (shown this once; only its SHA-256 is stored). */
  token: string;
  /** Whom it was made for. */
  email: string;
  expires_at: string;
}

/** Options of {@link ApprovalsApi.link}. */
export interface ApprovalLinkInput {
  /** The outside approver's e-mail address, recorded with the decision as `link:<email>`. */
  email: string;
  /** When the link stops working: an ISO date-time, or a `Date`. @default 7 days from now */
  expires?: string | Date;
}

/** What `engine.events.send` did. */
export interface EventSent {
  /** The event's id. */
  id: string;
  /** Runs whose waits it ended (they go on); when none, it is kept for waits that begin later. */
  resumed: string[];
}

/** Approvals as one principal may see and decide them (`engine.approvals`, `engine.as(p).approvals`). */
export interface ApprovalsApi {
  /** The approvals waiting that the principal may decide, oldest first. */
  list(): Promise<Approval[]>;
  /**
   * An approval the principal may decide or whose run it may read.
   * @throws {@link NotFoundError} when there is none it may see.
   */
  get(id: string): Promise<Approval>;
  /**
   * Decides an approval: the first rejection, or the last approval needed, ends the wait and the
   * run goes on.
   * @throws {@link NotFoundError} as `get`; {@link ForbiddenError} when the principal is not an
   *   assignee (or started the run without `self_approval`); {@link ValidationError} naming the
   *   field of a bad decision or `data` outside the form; a `StepwireError` `conflict` when the
   *   approval has ended or the principal decided it already.
   */
  decide(id: string, decision: DecisionInput): Promise<Approval>;
  /**
   * A single-use, expiring link for an outside approver (the principal must be able to decide).
   * @throws as `decide` for who may; {@link ValidationError} for a bad `email` or `expires`.
   */
  link(id: string, input: ApprovalLinkInput): Promise<ApprovalLink>;
}

/** What approvals need from the engine. @internal */
export interface ApprovalsHost {
  storage: StorageAdapter;
  book: WaitBook;
  audit: AuditLog;
  /** The grants of a principal under the access policy (all, without one). */
  grants(principal: Principal): Promise<Grants>;
  /** A wait of a run's step ended: the run goes on. */
  resume(runId: string, step: string): Promise<void>;
  /** Notes a decision in the run's trace and its event log (a run on the queue has one). */
  noted(record: WaitRecord, decision: Decision, outcome: 'success' | 'failure' | 'denied'): Promise<void>;
}

/** The longest a link may live: 90 days. */
const MAX_LINK_MS = 90 * 24 * 3600 * 1000;
const DEFAULT_LINK_MS = 7 * 24 * 3600 * 1000;
const MAX_COMMENT = 10_000;
const MAX_PAYLOAD_CHARS = 1_000_000;

/** A stored link: which approval, for whom, until when. */
interface StoredLink {
  wait_id: string;
  email: string;
  expires_at: string;
}

/** Approvals, events and links over the wait book. @internal */
export class Approvals {
  readonly #host: ApprovalsHost;

  constructor(host: ApprovalsHost) {
    this.#host = host;
  }

  /** The API as `principal` uses it. */
  as(principal: Principal): ApprovalsApi {
    return {
      list: () => this.list(principal),
      get: (id) => this.get(principal, id),
      decide: (id, decision) => this.decide(principal, id, decision),
      link: (id, input) => this.link(principal, id, input),
    };
  }

  async list(principal: Principal): Promise<Approval[]> {
    const open = await this.#host.book.open('approval');
    const mine: WaitRecord[] = [];
    for (const record of open)
      if (mayDecide(principal, record) && (await this.#runGoesOn(record))) mine.push(record);
    return Promise.all(mine.map((record) => this.#approval(record)));
  }

  async get(principal: Principal, id: string): Promise<Approval> {
    const record = await this.#find(id);
    if (!mayDecide(principal, record) && !(await this.#mayRead(principal, record)))
      throw new NotFoundError('approval', id);
    return this.#approval(record);
  }

  async decide(principal: Principal, id: string, input: DecisionInput): Promise<Approval> {
    const record = await this.#find(id);
    const audit = (outcome: AuditRecord['outcome'], detail: Record<string, unknown>) =>
      this.#audit(principal, record, outcome, detail);
    if (!mayDecide(principal, record)) {
      if (!(await this.#mayRead(principal, record))) throw new NotFoundError('approval', id);
      await audit('denied', { reason: 'not an assignee' });
      throw new ForbiddenError(`${principal.kind} "${principal.id}" is not an assignee of this approval`);
    }
    if (isSelf(principal, record)) {
      await audit('denied', { reason: 'self approval' });
      throw new ForbiddenError(
        'the person who started the run may not decide its approval (the step sets self_approval: false)',
      );
    }
    return this.#decide(record, principal.id, input, audit, principal.name ?? principal.email);
  }

  /** Whether the run of a wait may still go on (it was not cancelled or failed meanwhile). */
  async #runGoesOn(record: WaitRecord): Promise<boolean> {
    const run = await this.#host.storage.get<{ status?: string }>('runs', record.run_id);
    return run?.status === 'waiting' || run?.status === 'running' || run?.status === 'queued';
  }

  async link(principal: Principal, id: string, input: ApprovalLinkInput): Promise<ApprovalLink> {
    const record = await this.#find(id);
    if (!mayDecide(principal, record)) {
      if (!(await this.#mayRead(principal, record))) throw new NotFoundError('approval', id);
      throw new ForbiddenError(`${principal.kind} "${principal.id}" is not an assignee of this approval`);
    }
    if (record.status !== 'waiting')
      throw new StepwireError('conflict', 'this approval has ended: no link is needed');
    const email = checkEmail((input as { email?: unknown } | undefined)?.email);
    const expires = linkExpiry(input.expires);
    const token = randomToken();
    const stored: StoredLink = { wait_id: record.id, email, expires_at: expires };
    await this.#host.storage.put('wait_links', await hashOf(token), stored);
    await this.#audit(
      principal,
      record,
      'success',
      { link_for: email, expires_at: expires },
      'approval.link',
    );
    return { path: `/approvals/${record.id}/respond?token=${token}`, token, email, expires_at: expires };
  }

  /**
   * The approval a link opens, when the token is one made for it and has neither expired nor been
   * used. @throws {@link NotFoundError} otherwise (nothing tells a used link from a wrong one).
   */
  async withLink(id: string, token: string): Promise<{ approval: Approval; email: string }> {
    const link = await this.#link(id, token);
    return { approval: await this.#approval(await this.#find(id)), email: link.email };
  }

  /** Decides with a link: once per link, recorded as `link:<email>`. @throws as {@link Approvals.withLink}, `decide`. */
  async decideWithLink(id: string, token: string, input: DecisionInput): Promise<Approval> {
    const link = await this.#link(id, token);
    const record = await this.#find(id);
    const by = `link:${link.email}`;
    const audit = (outcome: AuditRecord['outcome'], detail: Record<string, unknown>) =>
      this.#audit({ id: by, kind: 'user', roles: [], email: link.email }, record, outcome, detail);
    if (record.approval?.self_approval !== true && record.initiator?.email?.toLowerCase() === link.email) {
      await audit('denied', { reason: 'self approval' });
      throw new ForbiddenError('the person who started the run may not decide its approval');
    }
    checkDecision(input, record);
    // Single use: the first decision through the link takes it.
    if (
      !(await this.#host.storage.put(
        'wait_links',
        `${await hashOf(token)}/used`,
        { at: new Date().toISOString() },
        { ifAbsent: true },
      ))
    )
      throw new NotFoundError('approval', id);
    return this.#decide(record, by, input, audit, link.email);
  }

  /** Sends an event to the waits for it (see `WaitBook.send`); the runs whose waits it ended go on. */
  async send(event: string, payload: unknown): Promise<EventSent> {
    const name = EventWaitSchema.shape.event.safeParse(event);
    if (!name.success)
      throw new ValidationError([
        {
          code: 'invalid_value',
          path: 'event',
          message: `event: ${name.error.issues[0]?.message ?? 'invalid'}, got ${describeValue(event)}`,
        },
      ]);
    let text: string | undefined;
    try {
      text = JSON.stringify(payload ?? null);
    } catch {
      text = undefined;
    }
    if (text === undefined || text.length > MAX_PAYLOAD_CHARS)
      throw new ValidationError([
        {
          code: 'invalid_value',
          path: 'payload',
          message: `payload must be JSON of at most ${MAX_PAYLOAD_CHARS} characters`,
        },
      ]);
    const { id, ended } = await this.#host.book.send(name.data, JSON.parse(text) as unknown);
    for (const record of ended) await this.#host.resume(record.run_id, record.step);
    return { id, resumed: ended.map((record) => record.run_id) };
  }

  async #decide(
    record: WaitRecord,
    by: string,
    input: DecisionInput,
    audit: (outcome: AuditRecord['outcome'], detail: Record<string, unknown>) => Promise<void>,
    name?: string,
  ): Promise<Approval> {
    checkDecision(input, record);
    if (!(await this.#runGoesOn(record))) {
      await audit('failure', { code: 'conflict', approved: input.approved });
      throw new StepwireError(
        'conflict',
        'the run of this approval has ended (cancelled or failed): it takes no decision',
      );
    }
    const decision: Decision = {
      by,
      ...(name === undefined ? {} : { name }),
      at: new Date().toISOString(),
      approved: input.approved,
      ...(input.comment === undefined ? {} : { comment: input.comment }),
      ...(input.data === undefined ? {} : { data: input.data }),
    };
    let end: WaitEnd | undefined;
    try {
      end = await this.#host.book.decide(record, decision);
    } catch (error) {
      await audit('failure', {
        code: (error as { code?: string }).code ?? 'error',
        approved: input.approved,
      });
      throw error;
    }
    await audit('success', {
      approved: input.approved,
      ...(input.comment === undefined ? {} : { comment: input.comment }),
      ended: end !== undefined,
    });
    await this.#host.noted(record, decision, 'success');
    if (end) await this.#host.resume(record.run_id, record.step);
    return this.#approval(await this.#find(record.id));
  }

  async #find(id: string): Promise<WaitRecord> {
    if (typeof id !== 'string' || id === '') throw new NotFoundError('approval', String(id));
    const record = await this.#host.storage.get<WaitRecord>('waits', id);
    if (!record || record.kind !== 'approval') throw new NotFoundError('approval', id);
    return record;
  }

  async #link(id: string, token: unknown): Promise<StoredLink> {
    if (typeof token !== 'string' || token.length < 20 || token.length > 200)
      throw new NotFoundError('approval', id);
    const hash = await hashOf(token);
    const link = await this.#host.storage.get<StoredLink>('wait_links', hash);
    if (!link || link.wait_id !== id || Date.parse(link.expires_at) <= Date.now())
      throw new NotFoundError('approval', id);
    if (await this.#host.storage.get('wait_links', `${hash}/used`)) throw new NotFoundError('approval', id);
    return link;
  }

  async #mayRead(principal: Principal, record: WaitRecord): Promise<boolean> {
    const grants = await this.#host.grants(principal);
    if (grants.allows('runs.read')) return true;
    const own = record.initiator?.id === principal.id && record.initiator.kind === principal.kind;
    return own && grants.allows('runs.read_own');
  }

  async #approval(record: WaitRecord): Promise<Approval> {
    const answers = await this.#host.book.answers(record.id);
    const decisions = answers.flatMap(({ kind, ...rest }) => (kind === 'decision' ? [rest as Decision] : []));
    const end = endOf(record, answers);
    const timedOut = answers.some((a) => a.kind === 'timeout');
    const approval = record.approval!;
    const status: ApprovalStatus = !end
      ? 'waiting'
      : timedOut
        ? 'timed_out'
        : (end as { output: { approved: boolean } }).output.approved
          ? 'approved'
          : 'rejected';
    return {
      id: record.id,
      status,
      run_id: record.run_id,
      workflow: record.workflow,
      step: record.step,
      ...(record.item === undefined ? {} : { item: record.item }),
      title: approval.title,
      ...(approval.description === undefined ? {} : { description: approval.description }),
      assignees: approval.assignees,
      required: approval.required ?? 1,
      ...(approval.form === undefined ? {} : { form: approval.form }),
      ...(approval.show === undefined ? {} : { show: approval.show }),
      self_approval: approval.self_approval ?? false,
      ...(record.initiator ? { initiator: record.initiator } : {}),
      decisions,
      began_at: record.began_at,
      ...(record.due_at === undefined ? {} : { due_at: record.due_at }),
      ...(record.resolved_at === undefined ? {} : { resolved_at: record.resolved_at }),
    };
  }

  async #audit(
    principal: Principal,
    record: WaitRecord,
    outcome: AuditRecord['outcome'],
    detail: Record<string, unknown>,
    action = 'approval.decide',
  ): Promise<void> {
    await this.#host.audit.record({
      principal: { id: principal.id, kind: principal.kind },
      action,
      resource: `approval:${record.id}`,
      outcome,
      detail: { run_id: record.run_id, step: record.step, ...detail },
    });
  }
}

/** Whether `principal` is an assignee of the approval (the service always is). */
function mayDecide(principal: Principal, record: WaitRecord): boolean {
  if (principal.kind === 'service') return true;
  const assignees = record.approval?.assignees;
  if (!assignees) return false;
  if (assignees.roles?.some((role) => principal.roles.includes(role))) return true;
  const email = principal.email?.toLowerCase();
  return (
    assignees.users?.some(
      (user) => user === principal.id || (email !== undefined && user.toLowerCase() === email),
    ) ?? false
  );
}

/** Whether `principal` started the run of an approval that does not allow self-approval. */
function isSelf(principal: Principal, record: WaitRecord): boolean {
  if (record.approval?.self_approval === true || principal.kind === 'service') return false;
  const initiator = record.initiator;
  return initiator !== undefined && initiator.id === principal.id && initiator.kind === principal.kind;
}

/** Checks a decision: `approved` a boolean, `comment` short text, `data` valid for the form. */
function checkDecision(input: DecisionInput, record: WaitRecord): void {
  const issues: { code: string; path: string; message: string }[] = [];
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError([
      {
        code: 'invalid_type',
        path: '',
        message: `a decision must be an object { approved, comment?, data? }, got ${describeValue(input)}`,
      },
    ]);
  }
  if (typeof input.approved !== 'boolean')
    issues.push({
      code: 'invalid_type',
      path: 'approved',
      message: `approved must be true or false, got ${describeValue(input.approved)}`,
    });
  if (
    input.comment !== undefined &&
    (typeof input.comment !== 'string' || input.comment.length > MAX_COMMENT)
  )
    issues.push({
      code: 'invalid_value',
      path: 'comment',
      message: `comment must be text of at most ${MAX_COMMENT} characters`,
    });
  const form = record.approval?.form;
  if (form && input.approved === true) {
    for (const issue of compileSchema(form, { path: 'form' }).validate(input.data ?? {}))
      issues.push({ ...issue, path: issue.path ? `data.${issue.path}` : 'data' });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

function checkEmail(email: unknown): string {
  if (
    typeof email !== 'string' ||
    !/^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/.test(email) ||
    email.length > 320
  )
    throw new ValidationError([
      {
        code: 'invalid_value',
        path: 'email',
        message: `email must be an e-mail address, got ${describeValue(email)}`,
      },
    ]);
  return email.toLowerCase();
}

function linkExpiry(expires: unknown): string {
  const now = Date.now();
  if (expires === undefined) return new Date(now + DEFAULT_LINK_MS).toISOString();
  const at =
    expires instanceof Date
      ? expires.getTime()
      : typeof expires === 'string'
        ? Date.parse(expires)
        : Number.NaN;
  if (Number.isNaN(at) || at <= now || at > now + MAX_LINK_MS)
    throw new ValidationError([
      {
        code: 'invalid_value',
        path: 'expires',
        message: `expires must be a date-time in the next 90 days, got ${describeValue(expires)}`,
      },
    ]);
  return new Date(at).toISOString();
}

function randomToken(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return `swa_${hexOf(bytes)}`;
}

async function hashOf(token: string): Promise<string> {
  return hexOf(await sha256(token));
}
