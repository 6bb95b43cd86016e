/**
 * The ids, query checks and paging of the audit log, shared so every storage (and `AuditLog` on a
 * storage without `appendAudit`) numbers, filters and pages entries alike.
 * @module
 */
import { ValidationError, type Issue } from '../errors/index.js';
import type { AuditEntry, AuditPage, AuditQuery } from './types.js';

/** A checked {@link AuditQuery}: `limit` filled in (what a storage's `listAudit` is given). */
export type CheckedAuditQuery = Required<Pick<AuditQuery, 'limit'>> & AuditQuery;

/** Digits of an entry id: its sequence number zero-padded, so ids sort as text in append order. */
const ID_DIGITS = 16;
const ID = /^\d{16}$/;
const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 100;
const FILTERS = ['action', 'principal', 'resource'] as const;

/** The id of the entry appended `seq`-th (from 1). @internal */
export function auditId(seq: number | bigint | string): string {
  return String(seq).padStart(ID_DIGITS, '0');
}

/** The sequence number an id holds (ids come from {@link auditId}; a checked `after` is one). @internal */
export function auditSeq(id: string): number {
  return Number(id);
}

/**
 * The query with its default limit, every wrong field named. @internal
 * @throws {@link ValidationError} naming `limit` (not a whole number from 1 to 1000), `after` (not an
 *   entry id) or a filter that is not a string.
 */
export function checkAuditQuery(query: AuditQuery | undefined = {}): CheckedAuditQuery {
  if (typeof query !== 'object' || query === null || Array.isArray(query))
    throw new ValidationError([{ code: 'invalid_type', path: '', message: 'the query must be an object' }]);
  const issues: Issue[] = [];
  const { after, limit = DEFAULT_LIMIT } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    issues.push({
      code: 'invalid_limit',
      path: 'limit',
      message: `must be a whole number from 1 to ${MAX_LIMIT}`,
    });
  if (after !== undefined && !(typeof after === 'string' && ID.test(after)))
    issues.push({
      code: 'invalid_cursor',
      path: 'after',
      message: 'must be the `next` or an entry `id` of a previous page',
    });
  for (const name of FILTERS) {
    const value = query[name];
    if (value !== undefined && typeof value !== 'string')
      issues.push({ code: 'invalid_type', path: name, message: 'must be a string' });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  const checked: CheckedAuditQuery = { limit };
  if (after !== undefined) checked.after = after;
  for (const name of FILTERS) if (query[name] !== undefined) checked[name] = query[name];
  return checked;
}

/**
 * One page out of every entry, given oldest first: what a storage without an index answers to
 * `StorageAdapter.listAudit`. @internal
 */
export function pageOfAudit(entries: Iterable<AuditEntry>, query: CheckedAuditQuery): AuditPage {
  const { after, limit, action, principal, resource } = query;
  const page: AuditEntry[] = [];
  for (const entry of entries) {
    if (after !== undefined && entry.id <= after) continue;
    if (action !== undefined && entry.action !== action) continue;
    if (principal !== undefined && entry.principal.id !== principal) continue;
    if (resource !== undefined && entry.resource !== resource) continue;
    // One more than the page shows whether another page follows.
    if (page.length === limit) return { entries: page, next: page.at(-1)!.id };
    page.push(entry);
  }
  return { entries: page };
}
