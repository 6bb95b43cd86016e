/**
 * The approvals inbox and an approval's page, rendered on the server in the screens' style: no
 * script, every value escaped. A decision is always a POST of the page's form (with the session's
 * form token, or the link's token for an outside approver): opening a page decides nothing.
 * @module
 */
import type { Approval } from '../engine/waits/approvals.js';
import { escapeHtml, renderPage, signOutForm } from '../app/render.js';

/** Who is signed in (for the sign-out form), or the link an outside approver opened. @internal */
export interface PageAccess {
  /** The signed-in session's form token and name. */
  session?: { csrf: string; who: string } | undefined;
  /** The token of the link the page was opened with. */
  token?: string | undefined;
}

/** The inbox: the approvals the principal may decide. @internal */
export function renderInbox(approvals: readonly Approval[], base: string, access: PageAccess): string {
  const rows = approvals
    .map(
      (a) =>
        `<tr><td><a href="${escapeHtml(`${base}/approvals/${encodeURIComponent(a.id)}`)}">${escapeHtml(a.title)}</a></td><td>${escapeHtml(a.workflow)}</td><td>${escapeHtml(a.began_at)}</td><td>${escapeHtml(a.due_at ?? '')}</td><td>${a.decisions.filter((d) => d.approved).length} of ${a.required}</td></tr>`,
    )
    .join('\n');
  const body =
    approvals.length === 0
      ? '<p class="status">Nothing waits for your decision.</p>'
      : `<table><caption>Approvals waiting for you</caption><thead><tr><th scope="col">Approval</th><th scope="col">Workflow</th><th scope="col">Since</th><th scope="col">Due</th><th scope="col">Approved</th></tr></thead><tbody>
${rows}
</tbody></table>`;
  return page('Approvals', `<h1>Approvals</h1>\n${body}`, base, access);
}

/** One approval: its title, description, the values its step shows, its decisions, and the form. @internal */
export function renderApproval(
  approval: Approval,
  base: string,
  access: PageAccess,
  problems: readonly string[] = [],
): string {
  const parts: string[] = [`<h1>${escapeHtml(approval.title)}</h1>`];
  if (approval.description) parts.push(`<p>${escapeHtml(approval.description)}</p>`);
  parts.push(
    `<p class="status">${escapeHtml(statusText(approval))} · workflow ${escapeHtml(approval.workflow)}, step ${escapeHtml(approval.step)}${approval.due_at ? ` · due ${escapeHtml(approval.due_at)}` : ''}</p>`,
  );
  if (approval.show && Object.keys(approval.show).length > 0)
    parts.push(
      `<dl>${Object.entries(approval.show)
        .map(([label, value]) => `<dt>${escapeHtml(label)}</dt><dd>${escapeHtml(shown(value))}</dd>`)
        .join('')}</dl>`,
    );
  if (approval.decisions.length > 0)
    parts.push(
      `<h2>Decisions</h2><ul>${approval.decisions
        .map(
          (d) =>
            `<li>${escapeHtml(d.name ?? d.by)}: ${d.approved ? 'approved' : 'rejected'} at ${escapeHtml(d.at)}${d.comment ? ` (${escapeHtml(d.comment)})` : ''}</li>`,
        )
        .join('')}</ul>`,
    );
  if (problems.length > 0)
    parts.push(
      `<div role="alert" class="errors"><ul>${problems.map((p) => `<li>${escapeHtml(p)}</li>`).join('')}</ul></div>`,
    );
  if (approval.status === 'waiting') parts.push(decisionForm(approval, base, access));
  return page(approval.title, parts.join('\n'), base, access);
}

/** The decision form: the fields of the approval's form, a comment, approve and reject. */
function decisionForm(approval: Approval, base: string, access: PageAccess): string {
  const action = access.token
    ? `${base}/approvals/${encodeURIComponent(approval.id)}/respond`
    : `${base}/approvals/${encodeURIComponent(approval.id)}/decide`;
  const hidden = [
    access.session ? `<input type="hidden" name="_csrf" value="${escapeHtml(access.session.csrf)}">` : '',
    access.token ? `<input type="hidden" name="token" value="${escapeHtml(access.token)}">` : '',
  ].join('');
  const fields = formFields(approval.form);
  return `<form method="post" action="${escapeHtml(action)}">${hidden}
${fields}
<p><label for="comment">Comment</label><br><textarea id="comment" name="comment" rows="3" maxlength="10000"></textarea></p>
<p><button type="submit" name="decision" value="approve">Approve</button> <button type="submit" name="decision" value="reject">Reject</button></p>
</form>`;
}

/** Inputs for the top-level properties of a form's JSON Schema: text, number, checkbox or select. */
function formFields(form: Record<string, unknown> | undefined): string {
  const properties = (form?.['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((form?.['required'] as string[] | undefined) ?? []);
  return Object.entries(properties)
    .map(([name, schema]) => {
      const id = `data-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
      const label = escapeHtml(typeof schema['title'] === 'string' ? schema['title'] : name);
      const field = `data.${name}`;
      const need = required.has(name) ? ' required' : '';
      const options = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
      if (options)
        return `<p><label for="${id}">${label}</label><br><select id="${id}" name="${escapeHtml(field)}"${need}>${options
          .map((o) => `<option value="${escapeHtml(String(o))}">${escapeHtml(String(o))}</option>`)
          .join('')}</select></p>`;
      if (schema['type'] === 'boolean')
        return `<p><input type="checkbox" id="${id}" name="${escapeHtml(field)}" value="true"> <label for="${id}">${label}</label></p>`;
      const type = schema['type'] === 'number' || schema['type'] === 'integer' ? 'number' : 'text';
      const step = schema['type'] === 'number' ? ' step="any"' : '';
      return `<p><label for="${id}">${label}</label><br><input type="${type}"${step} id="${id}" name="${escapeHtml(field)}"${need}></p>`;
    })
    .join('\n');
}

/** A decision from a submitted form: `decision`, `comment`, and `data.<name>` fields typed by the form's schema. @internal */
export function decisionFromForm(
  values: Record<string, string>,
  form: Record<string, unknown> | undefined,
): { approved: boolean; comment?: string; data?: Record<string, unknown> } | string {
  const decision = values['decision'];
  if (decision !== 'approve' && decision !== 'reject') return 'Choose Approve or Reject.';
  const properties = (form?.['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const data: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const raw = values[`data.${name}`];
    if (schema['type'] === 'boolean') data[name] = raw === 'true';
    else if (raw === undefined || raw === '') continue;
    else if (schema['type'] === 'number' || schema['type'] === 'integer') data[name] = Number(raw);
    else data[name] = raw;
  }
  const comment = values['comment']?.trim();
  return {
    approved: decision === 'approve',
    ...(comment ? { comment } : {}),
    ...(form ? { data } : {}),
  };
}

function statusText(approval: Approval): string {
  switch (approval.status) {
    case 'waiting':
      return `Waiting: ${approval.decisions.filter((d) => d.approved).length} of ${approval.required} approvals`;
    case 'approved':
      return 'Approved';
    case 'rejected':
      return 'Rejected';
    case 'timed_out':
      return 'Timed out';
  }
}

function shown(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function page(title: string, main: string, base: string, access: PageAccess): string {
  const inbox = access.token ? '' : `<a href="${escapeHtml(`${base}/approvals`)}">Approvals</a>`;
  const header = `<header class="app-bar"><div>${inbox}</div>${signOutForm(base, access.session)}</header>`;
  return renderPage(title, `${header}\n<main>\n${main}\n</main>`);
}
