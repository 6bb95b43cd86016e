import { StepwireError, type Issue } from '../errors/index.js';
import type { ProblemDetails } from './problem.js';

/**
 * The API answered with an error status. `problem` is its problem details body (synthesized from
 * the status when the answer had none, e.g. from a proxy), `issues` every problem with its path.
 */
export class HttpProblemError extends StepwireError {
  /** Always `"HttpProblemError"`, so guards also work across package copies. */
  override name = 'HttpProblemError';
  /** HTTP status of the answer. */
  readonly status: number;
  /** The problem details body. */
  readonly problem: ProblemDetails;
  /** Every problem the server listed, each with its path. */
  readonly issues: Issue[];

  constructor(status: number, problem: ProblemDetails, options?: { cause?: unknown }) {
    super(problem.code || 'http_error', `${status} ${problem.title}: ${problem.detail}`, options);
    this.status = status;
    this.problem = problem;
    this.issues = problem.errors;
  }
}

/** Reads an error answer into an {@link HttpProblemError}. @internal */
export async function problemErrorFrom(response: Response, cause: unknown): Promise<HttpProblemError> {
  let body: unknown;
  const text = await response.text().catch(() => '');
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const record = typeof body === 'object' && body !== null ? (body as Partial<ProblemDetails>) : {};
  const problem: ProblemDetails = {
    type: typeof record.type === 'string' ? record.type : 'about:blank',
    status: response.status,
    title: typeof record.title === 'string' ? record.title : response.statusText || 'Error',
    detail:
      typeof record.detail === 'string'
        ? record.detail
        : readable(text, response.headers.get('content-type')).slice(0, 200) ||
          `the server answered ${response.status}`,
    code: typeof record.code === 'string' ? record.code : `http_${response.status}`,
    errors: Array.isArray(record.errors) ? record.errors : [],
  };
  return new HttpProblemError(response.status, problem, { cause });
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * The text a person reads in an error answer that is not problem details: an HTML page (a screen's
 * 404, a proxy's error page) gives its visible words, without markup, styles or scripts.
 */
function readable(text: string, contentType: string | null): string {
  if (!/^\s*text\/html\b/i.test(contentType ?? '') && !/^\s*<!doctype html/i.test(text)) return text.trim();
  return text
    .replace(/<head[\s>][\s\S]*?<\/head>|<(script|style)[\s>][\s\S]*?<\/\1>|<!--[\s\S]*?-->/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity: string, name: string) => {
      if (name[0] !== '#') return ENTITIES[name.toLowerCase()] ?? entity;
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    })
    .replace(/\s+/g, ' ')
    .trim();
}
