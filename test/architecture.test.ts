import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every .ts file under src, with the relative modules it imports (value imports only, or all). */
function importGraph(valueOnly: boolean): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) graph.set(path, importsOf(path, valueOnly));
    }
  };
  walk('src');
  return graph;
}

function importsOf(file: string, valueOnly: boolean): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(
    /^\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s+['"](\.[^'"]+)['"]/gm,
  )) {
    const [, typeOnly, names = '', target = ''] = match;
    const onlyTypes =
      typeOnly !== undefined ||
      (/^\{[^}]*\}$/.test(names) &&
        names
          .slice(1, -1)
          .split(',')
          .every((n) => n.trim() === '' || n.trim().startsWith('type ')));
    if (valueOnly && onlyTypes) continue;
    found.push(normalize(join(dirname(file), target.replace(/\.js$/, '.ts'))));
  }
  return found;
}

/** The part of the code a file belongs to: `engine`, `adapters/google`, `adapters` (types), ... */
function layer(file: string): string {
  const parts = relative('src', file).split('/');
  if (parts[0] === 'adapters' && parts.length > 2) return `adapters/${parts[1]}`;
  return parts.length === 1 ? parts[0]!.replace(/\.ts$/, '') : parts[0]!;
}

/** Layers below the engine: they must never reach up into it or into what builds on it. */
const LOWER = [
  'errors',
  'schema',
  'builders',
  'query',
  'catalog',
  'script',
  'pdf',
  'request',
  'bytes',
  'adapters',
  'adapters/memory',
  'adapters/chat',
  'adapters/google',
];
const UPPER = ['engine', 'actions', 'app', 'http', 'cli', 'index', 'testing', 'adapters/node'];
/** What the edge-safe core (the `stepwire` and `stepwire/http` entries) may not import. */
const NODE_ONLY = ['adapters/node', 'adapters/google', 'cli', 'testing'];

describe('architecture (DESIGN section 1)', () => {
  const all = importGraph(false);

  it('keeps the dependency direction one way: lower layers never import the engine or what builds on it', () => {
    const wrong: string[] = [];
    for (const [file, targets] of all) {
      if (!LOWER.includes(layer(file))) continue;
      for (const target of targets) if (UPPER.includes(layer(target))) wrong.push(`${file} -> ${target}`);
    }
    expect(wrong).toEqual([]);
  });

  it('keeps Node-only parts out of the edge-safe core', () => {
    const wrong: string[] = [];
    for (const [file, targets] of all) {
      if (NODE_ONLY.includes(layer(file))) continue;
      for (const target of targets) if (NODE_ONLY.includes(layer(target))) wrong.push(`${file} -> ${target}`);
    }
    expect(wrong).toEqual([]);
  });

  it('has no import cycles between modules at run time', () => {
    const graph = importGraph(true);
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const next of graph.get(file) ?? []) {
        if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
