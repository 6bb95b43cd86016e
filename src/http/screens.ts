import type { RouteEngine } from './route.js';
import type { SessionInfo } from './auth.js';
import { NotFoundError, isForbiddenError, isStepwireError } from '../errors/index.js';
import { renderMessagePage, renderScreen } from '../app/render.js';
import { exportGrid } from '../app/grid.js';
import { setOwn } from '../schema/own.js';
import { readBytes } from './body.js';
import { HttpProblem } from './problem.js';

/** Parameters of a screen route, taken from the path (already URL-decoded). @internal */
export interface ScreenRouteParams {
  /** Application name. */
  app: string;
  /** Screen url. */
  screen: string;
  /** Form component name, for `POST .../forms/{component}`. */
  form?: string;
  /** The screen's query parameters. @default the request URL's query string */
  query?: Readonly<Record<string, string>>;
}

/** Options of {@link handleScreenRoute}. @internal */
export interface ScreenRouteOptions {
  /** Path the handler is mounted at (e.g. `/api`); links and redirects start with it. @default "" */
  basePath?: string;
  /** Largest form body read, in bytes. @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** The signed-in session: its token goes in every form, and a form must bring it back. */
  session?: SessionInfo | undefined;
}

/**
 * Headers of every HTML answer (screens, the sign-in pages): no scripts, no framing, styles inline
 * only, forms to this origin, never cached. @internal
 */
export const HTML_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * Serves application screens as HTML: `GET /applications/{app}/screens/{screen}` renders the
 * screen (query string passed through); `POST .../screens/{screen}/forms/{form}` submits a form and
 * answers 303 to the redirect, or 422 with the screen re-rendered with the errors (invalid input, a
 * failed run, a redirect that cannot be built). Unknown app, screen or form: 404 HTML page.
 * @internal
 */
export async function handleScreenRoute(
  engine: Pick<RouteEngine, 'applications'>,
  request: Request,
  params: ScreenRouteParams,
  options: ScreenRouteOptions = {},
): Promise<Response> {
  const basePath = (options.basePath ?? '').replace(/\/+$/, '').replace(/^\/+/, '/');
  const query = params.query ?? new URL(request.url).searchParams;
  const isForm = params.form !== undefined;
  if (request.method !== (isForm ? 'POST' : 'GET')) {
    return html(405, renderMessagePage('Method not allowed', `Use ${isForm ? 'POST' : 'GET'} here.`), {
      allow: isForm ? 'POST' : 'GET',
    });
  }
  // A page of another site may make a signed-in browser post a form (cross-site request forgery):
  // the browser says so in Sec-Fetch-Site, and nothing runs.
  if (isForm && request.headers.get('sec-fetch-site') === 'cross-site')
    return html(
      403,
      renderMessagePage('Forbidden', 'A form of this application can only be sent from its own pages.'),
    );
  try {
    const session = options.session;
    const shown = session && {
      csrf: session.csrf,
      who: session.principal.name ?? session.principal.email ?? session.principal.id,
    };
    const app = await engine.applications.open(params.app);
    if (!isForm)
      return html(
        200,
        renderScreen(app.name, await app.screen(params.screen, query), {
          basePath,
          session: shown,
          menu: app.application.menu,
        }),
      );

    // An unknown screen or form is 404 before the body is read (as the rows route answers an unknown entity).
    const screen = app.application.screens.find((s) => s.url === params.screen);
    if (!screen) throw new NotFoundError('screen', `${app.name}/${params.screen}`);
    const form = screen.components.flat().find((c) => c.name === params.form);
    if (form?.type !== 'form') throw new NotFoundError('form', `${params.screen}/${params.form!}`);
    const values = await readForm(request, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    if (values instanceof Response) return values;
    // A signed-in browser's form carries its session's token: a form made elsewhere does not.
    const token = values._csrf;
    delete values._csrf;
    if (session && token !== session.csrf)
      return html(
        403,
        renderMessagePage(
          'Forbidden',
          'This form is not one this server gave you; open the screen again and send it from there.',
        ),
      );
    const result = await app.submit(params.screen, params.form!, values, query, {
      traceparent: request.headers.get('traceparent') ?? undefined,
    });
    if (result.ok) {
      const location = `${basePath}/applications/${encodeURIComponent(app.name)}${result.redirect}`;
      return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } });
    }
    // Invalid input, a failed run and a redirect that cannot be built all show the screen again.
    return html(
      422,
      renderScreen(app.name, result.screen, { basePath, session: shown, menu: app.application.menu }),
    );
  } catch (error) {
    if (error instanceof NotFoundError) return html(404, renderMessagePage('Not found', error.message));
    if (isForbiddenError(error)) return html(403, renderMessagePage('Forbidden', error.message));
    if (isStepwireError(error) && error.code === 'closed')
      return html(
        503,
        renderMessagePage(
          'Unavailable',
          'The service is shutting down and took nothing in; send the form again soon.',
        ),
      );
    if (isStepwireError(error))
      return html(500, renderMessagePage('This screen could not be shown', error.message));
    throw error;
  }
}

/**
 * Serves the CSV of a grid's view: `GET /applications/{app}/screens/{screen}/grids/{grid}/export`
 * with the screen's query string (search, sort and filters of the address applied, every page).
 * Opening the app needs `app.use`; the rows and columns are read as the viewer reads them (its
 * `entity.read`, row and column rules). An unknown app, screen or grid, or a grid without `export`,
 * is a 404 page. @internal
 */
export async function handleGridExport(
  engine: Pick<RouteEngine, 'applications' | 'catalog'>,
  limits: { readonly maxPageSize: number },
  request: Request,
  params: { app: string; screen: string; grid: string },
): Promise<Response> {
  const query: Record<string, string> = {};
  for (const [name, value] of new URL(request.url).searchParams)
    if (!Object.hasOwn(query, name)) setOwn(query, name, value);
  try {
    const app = await engine.applications.open(params.app);
    const screen = app.application.screens.find((s) => s.url === params.screen);
    if (!screen) throw new NotFoundError('screen', `${app.name}/${params.screen}`);
    const grid = screen.components.flat().find((c) => c.name === params.grid);
    if (grid?.type !== 'datagrid' || !grid.datagrid.export)
      throw new NotFoundError('grid export', `${params.screen}/${params.grid}`);
    const result = await exportGrid({ catalog: engine.catalog, options: { limits } }, grid, query);
    if ('error' in result)
      return html(result.status, renderMessagePage('This list could not be exported', result.error));
    const ascii = result.filename.replace(/[^A-Za-z0-9._-]/g, '_');
    return new Response(result.csv, {
      status: 200,
      headers: {
        'content-type': 'text/csv; charset=utf-8; header=present',
        'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(result.filename)}`,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      },
    });
  } catch (error) {
    if (error instanceof NotFoundError) return html(404, renderMessagePage('Not found', error.message));
    if (isForbiddenError(error)) return html(403, renderMessagePage('Forbidden', error.message));
    if (isStepwireError(error))
      return html(500, renderMessagePage('This list could not be exported', error.message));
    throw error;
  }
}

/** The string fields of a urlencoded or multipart body, read up to `limit` bytes; or an error answer. @internal */
export async function readForm(request: Request, limit: number): Promise<Record<string, string> | Response> {
  const header = (request.headers.get('content-type') ?? '').toLowerCase();
  const type = header.split(';', 1)[0]!.trim();
  const urlencoded = type === 'application/x-www-form-urlencoded';
  if (!urlencoded && type !== 'multipart/form-data') {
    return html(
      415,
      renderMessagePage(
        'Unsupported form encoding',
        'Send the form as application/x-www-form-urlencoded or multipart/form-data.',
      ),
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBytes(request, limit);
  } catch (error) {
    // Too large, or sent with a Content-Encoding that cannot be decoded: the same statuses as a JSON body.
    if (!(error instanceof HttpProblem)) throw error;
    const { status, detail } = error.details;
    const title =
      status === 413 ? 'Form too large' : status === 415 ? 'Unsupported form encoding' : 'Bad form';
    return html(
      status,
      renderMessagePage(title, status === 413 ? `The form may be at most ${limit} bytes.` : detail),
      error.headers,
    );
  }
  let fields: Iterable<[string, FormDataEntryValue]>;
  try {
    fields = urlencoded
      ? new URLSearchParams(new TextDecoder().decode(bytes))
      : await new Response(bytes as Uint8Array<ArrayBuffer>, {
          headers: { 'content-type': request.headers.get('content-type')! },
        }).formData();
  } catch {
    return html(400, renderMessagePage('Bad form', 'The form body could not be read.'));
  }
  const values: Record<string, string> = {};
  for (const [key, value] of fields) {
    if (typeof value !== 'string' || Object.hasOwn(values, key)) continue;
    setOwn(values, key, value);
  }
  return values;
}

/** An HTML answer with the headers of every page: no scripts, no framing, inline styles only. @internal */
export function html(status: number, body: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...HTML_HEADERS, ...extra } });
}
