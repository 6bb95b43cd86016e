import { HttpProblem, problem } from './problem.js';

/** Anything with a method and a path template such as `/workflows/{name}`. @internal */
export interface RouteShape {
  method: string;
  path: string;
}

/** What {@link Router.match} found. @internal */
export type RouteMatch<R> =
  | { kind: 'found'; route: R; params: Record<string, string> }
  | { kind: 'method'; allow: string[] }
  | { kind: 'none' };

interface Compiled<R> {
  route: R;
  /** Literal segments as strings; parameters as `{ param }`. */
  segments: (string | { param: string })[];
  /** How much the template's literals weigh: a literal earlier in the path weighs more. */
  score: number;
}

/**
 * Matches a path against path templates segment by segment. Each segment is URL-decoded on its own,
 * so `%2F` in a name stays inside that name. A template with a literal where another has a parameter
 * wins, whatever the order. `HEAD` finds the `GET` route of a path (RFC 9110 9.3.2), and is allowed
 * wherever `GET` is. @internal
 */
export class Router<R extends RouteShape> {
  /** The templates by their number of segments, in the order given. */
  #bySize = new Map<number, Compiled<R>[]>();

  constructor(routes: readonly R[]) {
    for (const route of routes) {
      const segments = route.path
        .split('/')
        .slice(1)
        .map((s) => (s.startsWith('{') && s.endsWith('}') ? { param: s.slice(1, -1) } : s));
      let score = 0;
      segments.forEach((segment, i) => {
        if (typeof segment === 'string') score += 1 << (segments.length - i);
      });
      const list = this.#bySize.get(segments.length) ?? [];
      list.push({ route, segments, score });
      this.#bySize.set(segments.length, list);
    }
  }

  /** Finds the route for `method` and `path` (the path below the base path, still encoded). */
  match(method: string, path: string): RouteMatch<R> {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const raw = path.replace(/\/+$/, '').split('/').slice(1);
    // Every segment is decoded, so that a malformed one is a 400 whatever route the path finds.
    const parts = raw.map(decodeSegment);
    let best: Compiled<R> | undefined;
    let allow: Set<string> | undefined;
    for (const compiled of this.#bySize.get(parts.length) ?? []) {
      if (!fits(compiled.segments, raw, parts)) continue;
      if (compiled.route.method !== wanted) {
        allow ??= new Set();
        allow.add(compiled.route.method);
        if (compiled.route.method === 'GET') allow.add('HEAD');
        continue;
      }
      if (!best || compiled.score > best.score) best = compiled;
    }
    if (best) {
      const params: Record<string, string> = {};
      best.segments.forEach((segment, i) => {
        if (typeof segment !== 'string') params[segment.param] = parts[i]!;
      });
      return { kind: 'found', route: best.route, params };
    }
    if (allow) return { kind: 'method', allow: [...allow].sort() };
    return { kind: 'none' };
  }
}

/** Whether a template's segments fit the path's: literals equal as sent, parameters not empty. */
function fits(segments: readonly (string | { param: string })[], raw: string[], parts: string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (typeof segment === 'string' ? segment !== raw[i] : parts[i] === '') return false;
  }
  return true;
}

function decodeSegment(segment: string): string {
  // Without `%` a segment decodes to itself.
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpProblem(
      problem(400, 'invalid_path', `The path segment "${segment}" is not valid percent-encoding.`),
    );
  }
}
