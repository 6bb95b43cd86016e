/**
 * Turns a step's `request_data` into a URL, method, headers and body, listing every problem at once.
 * @module
 */
import { ValidationError, type Issue } from '../errors/index.js';

/** Methods a request step may use. */
export const REQUEST_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** One of {@link REQUEST_METHODS}. */
export type RequestMethod = (typeof REQUEST_METHODS)[number];

/** Methods that may be retried: sending them twice has the effect of sending them once. */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** A request ready to send. @internal */
export interface PreparedRequest {
  url: URL;
  method: RequestMethod;
  headers: Headers;
  body: string | undefined;
}

const ROOT = 'request_data';
const PLACEHOLDER = /\{([A-Za-z_][\w.-]*)\}|(?<=\/):([A-Za-z_]\w*)/g;
const SPLIT_URL = /^([a-zA-Z][a-zA-Z\d+.-]*:\/\/[^/?#]*)([^?#]*)([\s\S]*)$/;

type Scalar = string | number | boolean | bigint;

function isScalar(value: unknown): value is Scalar {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    typeof value === 'bigint' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Fills `{name}` and `/:name` placeholders of the URL's path. */
function fillPath(url: string, params: Record<string, unknown>, issues: Issue[]): string {
  const parts = SPLIT_URL.exec(url);
  if (!parts) return url; // not absolute: `new URL` reports it
  const [, origin = '', path = '', rest = ''] = parts;
  const filled = path.replace(PLACEHOLDER, (whole, braced: string | undefined, colon: string | undefined) => {
    const name = braced ?? colon ?? '';
    const value = Object.hasOwn(params, name) ? params[name] : undefined;
    const at = `${ROOT}.path_params.${name}`;
    if (value === undefined || value === null || value === '') {
      issues.push({
        code: 'missing_path_param',
        path: at,
        message: `the url has placeholder ${whole} but path_params gives no value for "${name}"`,
      });
      return whole;
    }
    if (!isScalar(value)) {
      issues.push({
        code: 'invalid_type',
        path: at,
        message: `path parameter "${name}" must be a string or number, got ${describeType(value)}`,
      });
      return whole;
    }
    const text = String(value);
    if (text === '.' || text === '..') {
      issues.push({
        code: 'invalid_path_param',
        path: at,
        message: `path parameter "${name}" cannot be "${text}" (it would change the path)`,
      });
      return whole;
    }
    return encodeURIComponent(text);
  });
  return origin + filled + rest;
}

function addQuery(url: URL, params: Record<string, unknown>, issues: Issue[]): void {
  for (const [key, value] of Object.entries(params)) {
    const values = Array.isArray(value) ? value : [value];
    values.forEach((item: unknown, i) => {
      if (item === undefined || item === null) return;
      if (!isScalar(item)) {
        const at = `${ROOT}.query_params.${key}${Array.isArray(value) ? `[${i}]` : ''}`;
        issues.push({
          code: 'invalid_type',
          path: at,
          message: `query parameter "${key}" must be a string, number or boolean (or an array of them), got ${describeType(item)}`,
        });
        return;
      }
      url.searchParams.append(key, String(item));
    });
  }
}

function buildHeaders(raw: unknown, issues: Issue[]): Headers {
  const headers = new Headers();
  if (raw === undefined || raw === null) return headers;
  if (!isRecord(raw)) {
    issues.push({
      code: 'invalid_type',
      path: `${ROOT}.headers`,
      message: `headers must be an object of names to values, got ${describeType(raw)}`,
    });
    return headers;
  }
  for (const [name, value] of Object.entries(raw)) {
    const at = `${ROOT}.headers.${name}`;
    if (value === undefined) continue;
    if (!isScalar(value)) {
      issues.push({
        code: 'invalid_type',
        path: at,
        message: `header "${name}" must be a string, got ${describeType(value)}`,
      });
      continue;
    }
    if (CONNECTION_HEADERS.has(name.toLowerCase())) {
      issues.push({
        code: 'invalid_header',
        path: at,
        message: `header "${name}" belongs to the connection, which sets it; a step cannot`,
      });
      continue;
    }
    try {
      headers.set(name, String(value));
    } catch {
      issues.push({ code: 'invalid_header', path: at, message: headerProblem(name, String(value)) });
    }
  }
  return headers;
}

/**
 * Headers of the connection and the body's framing: fetch sets them (or refuses them when sending,
 * which would look like a network error and be retried).
 */
const CONNECTION_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'content-length',
  'expect',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
]);

/** Why `Headers` refused a header: its name, a line break or NUL, or a character beyond Latin-1. */
function headerProblem(name: string, value: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) return `"${name}" is not a valid header name`;
  if (/[\r\n\0]/.test(value)) return `the value of header "${name}" holds a line break or NUL`;
  return `the value of header "${name}" holds a character a header cannot carry (beyond U+00FF)`;
}

function buildBody(
  data: Record<string, unknown>,
  method: string,
  headers: Headers,
  issues: Issue[],
): string | undefined {
  const body = data['body'];
  if (body === undefined) return undefined;
  const at = `${ROOT}.body`;
  if (method === 'GET' || method === 'HEAD') {
    // null is no body (a reference into a skipped step gives null); anything else is one.
    if (body === null) return undefined;
    issues.push({ code: 'body_not_allowed', path: at, message: `a ${method} request cannot have a body` });
    return undefined;
  }
  if (typeof body === 'string') {
    if (!headers.has('content-type')) headers.set('content-type', 'text/plain; charset=utf-8');
    return body;
  }
  let text: string | undefined;
  try {
    text = JSON.stringify(body);
  } catch (error) {
    issues.push({
      code: 'invalid_body',
      path: at,
      message: `the body cannot be sent as JSON: ${error instanceof Error ? error.message : String(error)}`,
    });
    return undefined;
  }
  if (text === undefined) {
    issues.push({
      code: 'invalid_body',
      path: at,
      message: `the body cannot be sent as JSON (${describeType(body)})`,
    });
    return undefined;
  }
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return text;
}

/**
 * Validates `request_data` and builds the request; throws one `ValidationError` listing every problem,
 * each with its path under `request_data`. The address policy is checked later, per hop. @internal
 */
export function prepareRequest(data: unknown): PreparedRequest {
  const issues: Issue[] = [];
  if (!isRecord(data)) {
    throw new ValidationError([
      {
        code: 'invalid_type',
        path: ROOT,
        message: `request_data must be an object, got ${describeType(data)}`,
      },
    ]);
  }
  const rawMethod = data['method'] ?? 'GET';
  let method: RequestMethod = 'GET';
  if (
    typeof rawMethod === 'string' &&
    (REQUEST_METHODS as readonly string[]).includes(rawMethod.toUpperCase())
  ) {
    method = rawMethod.toUpperCase() as RequestMethod;
  } else {
    issues.push({
      code: 'unknown_method',
      path: `${ROOT}.method`,
      message: `method must be one of ${REQUEST_METHODS.join(', ')}, got ${typeof rawMethod === 'string' ? `"${rawMethod}"` : describeType(rawMethod)}`,
    });
  }
  const headers = buildHeaders(data['headers'], issues);
  const body = buildBody(data, method, headers, issues);

  let url: URL | undefined;
  const rawUrl = data['url'];
  if (typeof rawUrl !== 'string' || rawUrl === '') {
    issues.push({
      code: 'invalid_type',
      path: `${ROOT}.url`,
      message: `url must be a non-empty string, got ${describeType(rawUrl)}`,
    });
  } else {
    const pathParams = data['path_params'] ?? {};
    const queryParams = data['query_params'] ?? {};
    if (!isRecord(pathParams))
      issues.push({
        code: 'invalid_type',
        path: `${ROOT}.path_params`,
        message: `path_params must be an object, got ${describeType(pathParams)}`,
      });
    if (!isRecord(queryParams))
      issues.push({
        code: 'invalid_type',
        path: `${ROOT}.query_params`,
        message: `query_params must be an object, got ${describeType(queryParams)}`,
      });
    const filled = fillPath(rawUrl, isRecord(pathParams) ? pathParams : {}, issues);
    try {
      url = new URL(filled);
    } catch {
      issues.push({
        code: 'invalid_url',
        path: `${ROOT}.url`,
        message: `"${rawUrl}" is not an absolute URL`,
      });
    }
    if (url && isRecord(queryParams)) addQuery(url, queryParams, issues);
  }
  if (issues.length > 0 || !url) throw new ValidationError(issues);
  return { url, method, headers, body };
}
