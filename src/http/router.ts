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
}

/**
 * Matches a path against path templates segment by segment. Each segment is URL-decoded on its own,
 * so `%2F` in a name stays inside that name. A template with a literal where another has a parameter
 * wins, whatever the order. `HEAD` finds the `GET` route of a path (RFC 9110 9.3.2), and is allowed
 * wherever `GET` is. @internal
 */
export class Router<R extends RouteShape> {
  #routes: Compiled<R>[];

  constructor(routes: readonly R[]) {
    this.#routes = routes.map((route) => ({
      route,
      segments: route.path
        .split('/')
        .slice(1)
        .map((s) => (s.startsWith('{') && s.endsWith('}') ? { param: s.slice(1, -1) } : s)),
    }));
  }

  /** Finds the route for `method` and `path` (the path below the base path, still encoded). */
  match(method: string, path: string): RouteMatch<R> {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const raw = path.replace(/\/+$/, '').split('/').slice(1);
    const parts = raw.map(decodeSegment);
    let best: { compiled: Compiled<R>; params: Record<string, string>; score: number } | undefined;
    const allow = new Set<string>();
    for (const compiled of this.#routes) {
      if (compiled.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let score = 0;
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const segment = compiled.segments[i]!;
        if (typeof segment === 'string') {
          if (segment === raw[i]) score += 1 << (parts.length - i);
          else ok = false;
        } else if (parts[i] === '') ok = false;
        else params[segment.param] = parts[i]!;
      }
      if (!ok) continue;
      if (compiled.route.method !== wanted) {
        allow.add(compiled.route.method);
        if (compiled.route.method === 'GET') allow.add('HEAD');
        continue;
      }
      if (!best || score > best.score) best = { compiled, params, score };
    }
    if (best) return { kind: 'found', route: best.compiled.route, params: best.params };
    if (allow.size > 0) return { kind: 'method', allow: [...allow].sort() };
    return { kind: 'none' };
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpProblem(
      problem(400, 'invalid_path', `The path segment "${segment}" is not valid percent-encoding.`),
    );
  }
}
