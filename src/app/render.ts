import { SCREEN_STYLES } from './styles.js';

export { escapeHtml } from './html.js';
import { escapeHtml, screenHref, type RenderContext } from './html.js';
import { renderForm } from './render-form.js';
import { renderGrid } from './render-grid.js';
import { renderChart, renderMetric } from './render-chart.js';
import { parseRedirectUrl, type MenuItem } from '../schema/index.js';
import { resolveRedirect } from './redirect.js';
import type { ResolvedButton, ResolvedScreen, ResolvedText } from './types.js';

/** Options of {@link renderScreen}. */
export interface RenderScreenOptions {
  /** Path the HTTP handler is mounted at, without a trailing slash (e.g. `/api`). @default "" */
  basePath?: string;
  /**
   * The signed-in session's form token: every form carries it (a form posted without it is refused),
   * and the page shows who is signed in with a sign-out button.
   */
  session?: { csrf: string; who: string } | undefined;
  /**
   * The application's `menu`: shown in the bar of every screen, the entry of the current screen
   * marked (`aria-current="page"`).
   */
  menu?: readonly MenuItem[] | undefined;
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
<header class="app-bar"><div><a href="${escapeHtml(screenHref(appBase, `/screens/${screen.startUrl}`))}">${escapeHtml(appName)}</a></div>${renderMenu(options.menu, screen, appBase)}${signOutForm(base, options.session)}</header>
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
    case 'chart':
      return renderChart(component);
    case 'metric':
      return renderMetric(component);
  }
}

/**
 * The menu: a list of links, the current screen's marked. The entry marked is one for this screen
 * whose query parameters the address all has (the one naming the most of them), else none.
 */
function renderMenu(menu: readonly MenuItem[] | undefined, screen: ResolvedScreen, appBase: string): string {
  if (!menu || menu.length === 0) return '';
  let current = -1;
  let best = -1;
  menu.forEach((item, i) => {
    const target = parseRedirectUrl(item.url);
    if (!target || target.screen !== screen.url) return;
    const params = [...new URLSearchParams(target.query)];
    const matches = params.every(
      ([name, value]) => Object.hasOwn(screen.query, name) && screen.query[name] === value,
    );
    if (matches && params.length > best) [current, best] = [i, params.length];
  });
  const items = menu
    .map((item, i) => {
      return `<li><a href="${escapeHtml(screenHref(appBase, menuHref(item.url)))}"${i === current ? ' aria-current="page"' : ''}>${escapeHtml(item.label)}</a></li>`;
    })
    .join('');
  return `<nav class="app-menu" aria-label="Menu"><ul>${items}</ul></nav>`;
}

function renderText(text: ResolvedText, context: RenderContext): string {
  const contents = escapeHtml(text.contents);
  if (!text.heading) return `<div class="c-text"><p>${contents}</p></div>`;
  const level = context.headings++ === 0 ? 'h1' : 'h2';
  return `<div class="c-text"><${level}>${contents}</${level}></div>`;
}

function renderButton(button: ResolvedButton, context: RenderContext): string {
  return `<div class="c-button"><a class="button" href="${escapeHtml(screenHref(context.appBase, button.href))}">${escapeHtml(button.label)}</a></div>`;
}

function firstHeading(screen: ResolvedScreen): string | undefined {
  for (const row of screen.rows)
    for (const c of row) if (c.type === 'text' && c.heading && c.contents.trim()) return c.contents;
  return undefined;
}

/** A menu entry's address, its literal query encoded as redirects encode it; the app's root when it names no screen. */
function menuHref(url: string): string {
  const target = parseRedirectUrl(url)?.screen;
  if (target === undefined) return '/';
  try {
    return resolveRedirect(url, new Set([target]), { query: {} });
  } catch {
    return '/';
  }
}

function normalizeBase(basePath: string | undefined): string {
  const base = (basePath ?? '').replace(/\/+$/, '').replace(/^\/+/, '/');
  return base === '' || base.startsWith('/') ? base : `/${base}`;
}
