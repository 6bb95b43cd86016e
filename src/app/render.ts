import type { Column } from '../schema/index.js';
import { SCREEN_STYLES } from './styles.js';
import type {
  ResolvedButton,
  ResolvedDatagrid,
  ResolvedForm,
  ResolvedFormItem,
  ResolvedScreen,
  ResolvedText,
} from './types.js';

/** Options of {@link renderScreen}. */
export interface RenderScreenOptions {
  /** Path the HTTP handler is mounted at, without a trailing slash (e.g. `/api`). @default "" */
  basePath?: string;
  /**
   * The signed-in session's form token: every form carries it (a form posted without it is refused),
   * and the page shows who is signed in with a sign-out button.
   */
  session?: { csrf: string; who: string } | undefined;
}

/**
 * Renders a resolved screen as a complete, accessible HTML5 page. Every value (texts, labels,
 * cells, query parameters) is HTML-escaped; there is no client-side JavaScript: forms POST to
 * `{basePath}/applications/{app}/screens/{url}/forms/{component}` and the server answers 303.
 * @example
 * ```ts
 * const app = await engine.applications.open('shop');
 * const html = renderScreen('shop', await app.screen('start'), { basePath: '/api' });
 * ```
 */
export function renderScreen(
  appName: string,
  screen: ResolvedScreen,
  options: RenderScreenOptions = {},
): string {
  const base = normalizeBase(options.basePath);
  const appBase = `${base}/applications/${encodeURIComponent(appName)}`;
  const context: RenderContext = { appBase, screen, headings: 0, csrf: options.session?.csrf };
  const title = firstHeading(screen) ?? screen.url;
  const rows = screen.rows
    .map((row) => `<div class="row">${row.map((c) => renderComponent(c, context)).join('')}</div>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title === appName ? title : `${title} · ${appName}`)}</title>
<style>${SCREEN_STYLES}</style>
</head>
<body>
<header class="app-bar"><div><a href="${escapeHtml(screenHref(appBase, `/screens/${screen.startUrl}`))}">${escapeHtml(appName)}</a></div>${signOutForm(base, options.session)}</header>
<main>
${rows}
</main>
</body>
</html>
`;
}

/** Who is signed in, and the form that signs out (carrying the session's form token). @internal */
export function signOutForm(base: string, session: RenderScreenOptions['session']): string {
  if (!session) return '';
  return `<form class="sign-out" method="post" action="${escapeHtml(`${base}/sign-out`)}"><span>${escapeHtml(session.who)}</span><input type="hidden" name="_csrf" value="${escapeHtml(session.csrf)}"><button type="submit">Sign out</button></form>`;
}

/**
 * A small complete HTML page for a message (e.g. "not found"), escaped like screens.
 * @internal
 */
export function renderMessagePage(title: string, message: string): string {
  return renderPage(
    title,
    `<main>\n<h1>${escapeHtml(title)}</h1>\n<p class="status">${escapeHtml(message)}</p>\n</main>`,
  );
}

/**
 * A complete HTML page in the screens' style: `title` escaped here, `body` (the page's header and
 * main, already escaped) as it is. @internal
 */
export function renderPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${SCREEN_STYLES}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** Escapes text for HTML content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]!);
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

interface RenderContext {
  appBase: string;
  screen: ResolvedScreen;
  headings: number;
  /** The session's form token, put in every form. */
  csrf: string | undefined;
}

function renderComponent(component: ResolvedScreen['rows'][number][number], context: RenderContext): string {
  switch (component.type) {
    case 'text':
      return renderText(component, context);
    case 'form':
      return renderForm(component, context);
    case 'datagrid':
      return renderGrid(component, context);
    case 'button':
      return renderButton(component, context);
  }
}

function renderText(text: ResolvedText, context: RenderContext): string {
  const contents = escapeHtml(text.contents);
  if (!text.heading) return `<div class="c-text"><p>${contents}</p></div>`;
  const level = context.headings++ === 0 ? 'h1' : 'h2';
  return `<div class="c-text"><${level}>${contents}</${level}></div>`;
}

function renderForm(form: ResolvedForm, context: RenderContext): string {
  const { screen, appBase } = context;
  const search = new URLSearchParams(Object.entries(screen.query)).toString();
  const action = `${appBase}/screens/${encodeURIComponent(screen.url)}/forms/${encodeURIComponent(form.name)}${search ? `?${search}` : ''}`;
  const prefix = `f-${slug(form.name)}`;
  const ids = form.items.map((_, i) => `${prefix}-${i}`);
  const itemErrors = form.items.flatMap((item, i) =>
    item.error ? [`<li><a href="#${ids[i]}">${escapeHtml(item.error)}</a></li>`] : [],
  );
  let alert = '';
  if (form.error || itemErrors.length > 0) {
    const summary = form.error
      ? `<p>${escapeHtml(form.error)}</p>`
      : `<p>Please correct ${itemErrors.length === 1 ? 'this field' : 'these fields'}:</p>`;
    alert = `<div class="form-error" role="alert" id="${prefix}-error">${summary}${itemErrors.length > 0 ? `<ul>${itemErrors.join('')}</ul>` : ''}</div>`;
  }
  const fields = form.items.map((item, i) => renderItem(item, ids[i]!)).join('');
  const described = alert ? ` aria-describedby="${prefix}-error"` : '';
  const token =
    (form.submission === null
      ? ''
      : `<input type="hidden" name="_submission" value="${escapeHtml(form.submission)}">`) +
    (context.csrf === undefined
      ? ''
      : `<input type="hidden" name="_csrf" value="${escapeHtml(context.csrf)}">`);
  return `<div class="c-form"><form method="post" action="${escapeHtml(action)}" aria-label="${escapeHtml(form.name)}"${described}>${alert}${token}${fields}<button type="submit">${escapeHtml(form.submitLabel)}</button></form></div>`;
}

function renderItem(item: ResolvedFormItem, id: string): string {
  const errorId = `${id}-error`;
  const invalid = item.error ? ` aria-invalid="true" aria-describedby="${errorId}"` : '';
  const error = item.error ? `<p class="field-error" id="${errorId}">${escapeHtml(item.error)}</p>` : '';
  const marker = item.required ? '<span class="required" aria-hidden="true"> *</span>' : '';
  const label = `<label for="${id}">${escapeHtml(item.label)}${marker}</label>`;
  const name = escapeHtml(item.property);
  if (item.type === 'boolean') {
    const checked = item.value !== null && /^(on|true|1|yes)$/i.test(item.value.trim()) ? ' checked' : '';
    return `<div class="field checkbox"><input type="checkbox" id="${id}" name="${name}" value="on"${checked}${invalid}>${label}${error}</div>`;
  }
  const attrs: string[] = [];
  let hint = '';
  if (item.type === 'number') {
    const config = item.numberConfig ?? {};
    if (config.min !== undefined) attrs.push(`min="${config.min}"`);
    if (config.max !== undefined) attrs.push(`max="${config.max}"`);
    attrs.push(`step="${config.step ?? 'any'}"`);
    hint = numberHint(config);
  }
  if (item.required) attrs.push('required');
  const type = item.type === 'number' ? 'number' : item.type === 'date' ? 'date' : 'text';
  const value = item.value !== null ? ` value="${escapeHtml(item.value)}"` : '';
  return `<div class="field">${label}<input type="${type}" id="${id}" name="${name}"${value}${attrs.length > 0 ? ` ${attrs.join(' ')}` : ''}${invalid}>${hint}${error}</div>`;
}

/** The rules of a number field in words, shown under it: `From 1 to 100, in steps of 0.5.` */
function numberHint(config: { min?: number; max?: number; step?: number }): string {
  const { min, max, step } = config;
  const range =
    min !== undefined && max !== undefined
      ? `From ${min} to ${max}`
      : min !== undefined
        ? `At least ${min}`
        : max !== undefined
          ? `At most ${max}`
          : '';
  const steps = step === undefined ? '' : `${range ? ', in' : 'In'} steps of ${step}`;
  return range || steps ? `<p class="field-hint">${escapeHtml(`${range}${steps}.`)}</p>` : '';
}

function renderGrid(grid: ResolvedDatagrid, context: RenderContext): string {
  const numeric = grid.columns.map((c) => /^(NUMBER|INTEGER)$/i.test(c.type ?? ''));
  const head = grid.columns
    .map((c, i) => `<th scope="col"${numeric[i] ? ' class="num"' : ''}>${escapeHtml(c.name)}</th>`)
    .join('');
  const body =
    grid.rows.length === 0
      ? `<tr><td class="empty" colspan="${Math.max(grid.columns.length, 1)}">No rows${grid.page > 1 ? ' on this page' : ''}.</td></tr>`
      : grid.rows
          .map(
            (row) =>
              `<tr>${grid.columns.map((c, i) => `<td${numeric[i] ? ' class="num"' : ''}>${renderCell(row[i], c)}</td>`).join('')}</tr>`,
          )
          .join('\n');
  const caption = `${grid.entity}${grid.page > 1 || grid.hasNext ? ` (page ${grid.page})` : ''}`;
  const table = `<div class="table-wrap"><table><caption>${escapeHtml(caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
  const error = grid.error ? `<p class="grid-error" role="alert">${escapeHtml(grid.error)}</p>` : '';
  let pager = '';
  if (grid.hasPrevious || grid.hasNext) {
    const prev = grid.previousHref
      ? `<a rel="prev" href="${escapeHtml(screenHref(context.appBase, grid.previousHref))}">Previous</a>`
      : '<span class="disabled" aria-disabled="true">Previous</span>';
    const next = grid.nextHref
      ? `<a rel="next" href="${escapeHtml(screenHref(context.appBase, grid.nextHref))}">Next</a>`
      : '<span class="disabled" aria-disabled="true">Next</span>';
    pager = `<nav class="pager" aria-label="${escapeHtml(`Pages of ${grid.entity}`)}">${prev}<span class="status" aria-current="page">Page ${grid.page}</span>${next}</nav>`;
  }
  return `<div class="c-grid">${error}${table}${pager}</div>`;
}

function renderButton(button: ResolvedButton, context: RenderContext): string {
  return `<div class="c-button"><a class="button" href="${escapeHtml(screenHref(context.appBase, button.href))}">${escapeHtml(button.label)}</a></div>`;
}

function renderCell(value: unknown, column: Column): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (column.string?.is_url && typeof value === 'string' && /^https?:\/\/[^\s]+$/i.test(value)) {
    return `<a href="${escapeHtml(value)}" rel="noopener noreferrer nofollow">${escapeHtml(text)}</a>`;
  }
  return escapeHtml(text);
}

/** A full address from an app-relative `/screens/...` href; anything else falls back to the app. */
function screenHref(appBase: string, href: string): string {
  return href.startsWith('/screens/') && !href.startsWith('/screens//') ? `${appBase}${href}` : `${appBase}/`;
}

function firstHeading(screen: ResolvedScreen): string | undefined {
  for (const row of screen.rows)
    for (const c of row) if (c.type === 'text' && c.heading && c.contents.trim()) return c.contents;
  return undefined;
}

function normalizeBase(basePath: string | undefined): string {
  const base = (basePath ?? '').replace(/\/+$/, '').replace(/^\/+/, '/');
  return base === '' || base.startsWith('/') ? base : `/${base}`;
}

/**
 * A component name as a part of HTML ids, one to one: letters and digits kept, any other character
 * (`-` and `_` included) as `_<hex>_`, so two names never share an id, and `-` only separates.
 */
function slug(name: string): string {
  return name.replace(/[^A-Za-z0-9]/gu, (ch) => `_${ch.codePointAt(0)!.toString(16)}_`);
}
