/**
 * The frame of every console page: its menu, styles, sign-out form and headers, and the helpers the
 * pages share (escaping, shortening, answers to what went wrong).
 * @module
 */
import { escapeHtml, renderMessagePage } from '../../app/render.js';
import { SCREEN_STYLES } from '../../app/styles.js';
import { NotFoundError, isForbiddenError } from '../../errors/index.js';
import type { RouteContext } from '../route.js';
import { HTML_HEADERS } from '../screens.js';

/** Headers of a console page: the screens' headers, and the console's own script and event stream. */
export const CONSOLE_HEADERS: Record<string, string> = {
  ...HTML_HEADERS,
  'content-security-policy':
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
};

/** What a page needs to know of the request. @internal */
export interface PageFrame {
  /** Where the handler is mounted, without a trailing slash. */
  base: string;
  /** The signed-in session's form token and who it is, when signed in with a session. */
  session?: { csrf: string; who: string } | undefined;
}

/** The console's sections, in the menu's order. */
const MENU: [string, string][] = [
  ['Runs', '/console/runs'],
  ['Workflows', '/console/workflows'],
  ['Approvals', '/console/approvals'],
  ['Triggers', '/console/triggers'],
  ['Queue', '/console/queue'],
  ['Audit log', '/console/audit'],
];

const CONSOLE_STYLES = `
main { max-width: 80rem; }
.console-nav { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; padding: 0.75rem 1.5rem; margin: 0; list-style: none; }
.console-nav a { font-weight: 600; }
.app-bar > nav { flex: 1; }
.app-bar form.sign-out { border: 0; background: none; max-width: none; }
#run-status { margin: 0 0 1.5rem; }
.console-nav a[aria-current="page"] { text-decoration: underline; }
section { margin: 0 0 2rem; }
h1 { margin: 0 0 0.75rem; }
h2 { margin: 0 0 0.75rem; }
.picture { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; max-width: 100%; }
.picture svg { display: block; max-width: none; }
td { vertical-align: top; }
td.error { color: var(--error); }
.counts { display: flex; flex-wrap: wrap; gap: 0.5rem 1.25rem; margin: 0 0 1rem; padding: 0; list-style: none; }
.filters { display: flex; flex-wrap: wrap; gap: 0.75rem; align-items: flex-end; max-width: none; margin: 0 0 1rem; }
.filters label { display: block; font-weight: 600; font-size: 0.9375rem; }
.filters input, .filters select, form select, form input[type="text"], form textarea { font: inherit; padding: 0.375rem 0.5rem;
  border: 1px solid #8c959f; border-radius: 6px; max-width: 100%; }
form.inline { display: inline-block; border: 0; padding: 0; margin: 0 0.5rem 0.5rem 0; background: none; }
.actions { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.actions form { flex: 1 1 18rem; min-width: 0; }
.actions textarea, .actions select { width: 100%; }
main p, main h1, main li { overflow-wrap: anywhere; }
.danger { background: var(--error); border-color: var(--error); }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 8px; padding: 0.75rem; overflow-x: auto;
  font-size: 0.875rem; white-space: pre-wrap; word-break: break-word; margin: 0.25rem 0; }
summary { cursor: pointer; font-weight: 600; }
.steps details { margin: 0.25rem 0; }
@media (max-width: 40rem) { main { padding: 1rem; } th, td { padding: 0.375rem 0.5rem; } }
`;

/** A whole console page: the menu, `main`, the sign-out form. @internal */
export function consolePage(
  frame: PageFrame,
  title: string,
  main: string,
  options: { current?: string; script?: boolean } = {},
): string {
  const link = (label: string, path: string) =>
    `<li><a href="${escapeHtml(frame.base + path)}"${options.current === path ? ' aria-current="page"' : ''}>${escapeHtml(label)}</a></li>`;
  const signOut = frame.session
    ? `<form class="sign-out" method="post" action="${escapeHtml(`${frame.base}/sign-out`)}"><span>${escapeHtml(frame.session.who)}</span><input type="hidden" name="_csrf" value="${escapeHtml(frame.session.csrf)}"><button type="submit">Sign out</button></form>`
    : '';
  const script = options.script
    ? `\n<script src="${escapeHtml(`${frame.base}/console/console.js`)}" defer></script>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · stepwire console</title>
<style>${SCREEN_STYLES}${CONSOLE_STYLES}</style>${script}
</head>
<body>
<header class="app-bar"><nav aria-label="Console"><ul class="console-nav">${MENU.map(([l, p]) => link(l, p)).join('')}</ul></nav>${signOut}</header>
<main>
${main}
</main>
</body>
</html>
`;
}

/** The frame of the request: base path and session. @internal */
export function frameOf(context: RouteContext<unknown, unknown, unknown>): PageFrame {
  const session = context.identity.session;
  const who = session && (session.principal.name ?? session.principal.email ?? session.principal.id);
  return { base: context.options.basePath, session: session && { csrf: session.csrf, who: who! } };
}

/** A console page answer. @internal */
export function pageAnswer(status: number, body: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...CONSOLE_HEADERS, ...extra } });
}

/** A 303 to a console path. @internal */
export function seeOther(location: string): Response {
  return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } });
}

/** Whether the request asks for a page (`text/html` before JSON) rather than the API's problem details. */
export function wantsHtml(request: Request): boolean {
  const accept = request.headers.get('accept') ?? '';
  const htmlAt = accept.indexOf('text/html');
  if (htmlAt < 0) return false;
  const jsonAt = accept.indexOf('application/json');
  return jsonAt < 0 || htmlAt < jsonAt;
}

/**
 * Answers a page with `render`; a refusal or a missing resource is a page for a browser and the
 * API's problem details for any other client. @internal
 */
export async function answerPage(
  context: RouteContext<unknown, unknown, unknown>,
  render: () => Promise<Response>,
): Promise<Response> {
  try {
    return await render();
  } catch (error) {
    if (!wantsHtml(context.request)) throw error;
    if (isForbiddenError(error)) return pageAnswer(403, renderMessagePage('Forbidden', error.message));
    if (error instanceof NotFoundError) return pageAnswer(404, renderMessagePage('Not found', error.message));
    throw error;
  }
}

/** Text for a value in a page: strings as they are, the rest as JSON, cut at `max` characters. @internal */
export function shown(value: unknown, max = 2000): string {
  let text: string;
  if (value === undefined) text = '';
  else if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value, null, 2) ?? '';
    } catch {
      text = String(value);
    }
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

/** `escapeHtml` for short. @internal */
export const esc = escapeHtml;

/** A table with a caption, or a line saying there is nothing. @internal */
export function table(caption: string, head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="status">${esc(empty)}</p>`;
  return `<div class="table-wrap" tabindex="0" role="region" aria-label="${esc(caption)}"><table><caption>${esc(caption)}</caption><thead><tr>${head
    .map((h) => `<th scope="col">${esc(h)}</th>`)
    .join(
      '',
    )}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody></table></div>`;
}
