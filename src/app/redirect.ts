import { StepwireError } from '../errors/index.js';
import { FORBIDDEN_SEGMENTS, parseRedirectUrl } from '../schema/index.js';
import type { ScreenQuery } from './types.js';

/** `{{ kind.path }}` placeholders of redirect urls and texts. */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Characters a literal part of a redirect's query may keep as they are; others are percent-encoded. */
const QUERY_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@/?]/;

/** Where redirect placeholders take their values from. @internal */
export interface RedirectSources {
  /** The workflow output, after a form's run; absent for buttons. */
  output?: unknown;
  /** The current screen's query parameters. */
  query: ScreenQuery;
  /** A grid's row, by column name, for a `row_action`'s `{{row.<column>}}`; absent elsewhere. */
  row?: Readonly<Record<string, unknown>>;
}

/** A redirect that cannot be built (bad template, missing output). @internal */
export class RedirectError extends StepwireError {
  override name = 'RedirectError';
  constructor(message: string) {
    super('invalid_redirect', message);
  }
}

/**
 * Builds the app-relative address of a redirect: `/screens/<screen>?<query>`. The screen part
 * must name a screen of the app as written (no placeholders); placeholders in the query are
 * filled in, each value URL-encoded, so a value can never add a parameter, a path or a fragment.
 * A missing `{{query_params.x}}` is the empty string; a missing `{{output.x}}` or `{{row.x}}` (or
 * one without a value) is an error.
 * @internal
 */
export function resolveRedirect(
  template: string,
  screens: ReadonlySet<string>,
  sources: RedirectSources,
): string {
  const target = parseRedirectUrl(template);
  if (!target)
    throw new RedirectError(
      `redirect url "${template}" must be /screens/<screen_url> with an optional query string`,
    );
  if (!isScreenName(target.screen) || !screens.has(target.screen)) {
    throw new RedirectError(`redirect url "${template}" names no screen of this application`);
  }
  let query = '';
  let last = 0;
  for (const match of target.query.matchAll(PLACEHOLDER)) {
    query += encodeLiteral(target.query.slice(last, match.index));
    query += encodeURIComponent(placeholderValue(match[1]!, sources, template));
    last = match.index + match[0].length;
  }
  query += encodeLiteral(target.query.slice(last));
  return `/screens/${target.screen}${query === '' ? '' : `?${query}`}`;
}

/** Fills `{{query_params.x}}` into a text (missing: empty); other placeholders stay as written. @internal */
export function fillQueryParams(text: string, query: ScreenQuery): string {
  return text.replace(PLACEHOLDER, (whole, expression: string) => {
    const name = /^query_params\.(.+)$/.exec(expression)?.[1];
    if (name === undefined) return whole;
    return Object.hasOwn(query, name) ? query[name]! : '';
  });
}

/**
 * A config value that may hold `{{query_params.x}}` (a form's key, a grid's filter value), filled
 * in: `missing` names the first query parameter the address lacks. @internal
 */
export function fillQueryValue(value: string, query: ScreenQuery): { value: string } | { missing: string } {
  for (const match of value.matchAll(PLACEHOLDER)) {
    const name = /^query_params\.(.+)$/.exec(match[1]!)?.[1];
    if (name !== undefined && !Object.hasOwn(query, name)) return { missing: name };
  }
  return { value: fillQueryParams(value, query) };
}

/** True for a usable screen url: `.` and `..` would leave `/screens/` once a browser resolves them. @internal */
export function isScreenName(url: string): boolean {
  return url !== '' && url !== '.' && url !== '..' && /^[A-Za-z0-9._~-]+$/.test(url);
}

function placeholderValue(expression: string, sources: RedirectSources, template: string): string {
  const query = /^query_params\.(.+)$/.exec(expression)?.[1];
  if (query !== undefined) return Object.hasOwn(sources.query, query) ? sources.query[query]! : '';
  const column = /^row\.(.+)$/.exec(expression)?.[1];
  if (column !== undefined && sources.row !== undefined) {
    const cell = Object.hasOwn(sources.row, column) ? sources.row[column] : undefined;
    if (
      typeof cell === 'string' ||
      typeof cell === 'boolean' ||
      (typeof cell === 'number' && Number.isFinite(cell))
    )
      return String(cell);
    throw new RedirectError(`the row has no value in "${column}" for the link to {{row.${column}}}`);
  }
  const path = /^output\.(.+)$/.exec(expression)?.[1];
  if (path === undefined) {
    throw new RedirectError(
      `redirect url "${template}" uses {{${expression}}}; only {{output.<field>}} and {{query_params.<name>}} are allowed`,
    );
  }
  if (!('output' in sources))
    throw new RedirectError(
      `redirect url "${template}" uses {{output.${path}}}, but there is no workflow output here`,
    );
  let value: unknown = sources.output;
  for (const segment of path.split('.')) {
    const own =
      typeof value === 'object' &&
      value !== null &&
      !FORBIDDEN_SEGMENTS.has(segment) &&
      Object.hasOwn(value, segment);
    value = own ? (value as Record<string, unknown>)[segment] : undefined;
  }
  if (value === undefined || value === null) {
    throw new RedirectError(
      `the workflow succeeded, but its output has no "${path}" for the redirect to {{output.${path}}}`,
    );
  }
  if (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  )
    return String(value);
  throw new RedirectError(
    `output "${path}" is ${Array.isArray(value) ? 'an array' : typeof value}; a redirect can only carry a string, a number or a boolean`,
  );
}

/** Percent-encodes what a literal query part must not hold as is; keeps valid `%XX` escapes. */
function encodeLiteral(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) out += ch;
    else if (QUERY_SAFE.test(ch)) out += ch;
    else {
      const code = text.codePointAt(i)!;
      const lone = code >= 0xd800 && code <= 0xdfff;
      out += lone ? '%EF%BF%BD' : encodeURIComponent(String.fromCodePoint(code));
      if (code > 0xffff) i++;
    }
  }
  return out;
}
