import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { createHandler } from '../../src/http/index.js';
import { Engine, MemoryStorage, type StorageAdapter } from '../../src/index.js';
import { reachServer, testSchemas } from './server.js';

const url = await reachServer();
const schemas = testSchemas(url);

/** Paths naming a run, workflow or trigger whose id holds U+0000 (which Postgres text cannot hold). */
const ROUTES = [
  ['GET', '/runs/a%00b'],
  ['POST', '/runs/a%00b/cancel'],
  ['GET', '/workflows/a%00b'],
  ['GET', '/triggers/a%00b'],
  ['POST', '/hooks/a%00b'],
  ['GET', '/runs/a%00b/timeline.svg'],
] as const;

async function answers(engine: Engine) {
  const handler = createHandler(engine);
  const statuses: Record<string, number> = {};
  for (const [method, path] of ROUTES) {
    const response = await handler(
      new Request(`http://local${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: '{}' } : {}),
      }),
    );
    await response.text();
    statuses[`${method} ${path}`] = response.status;
  }
  const listed = await handler(new Request('http://local/runs?workflow=a%00b'));
  statuses['GET /runs?workflow=a%00b'] = listed.status;
  expect(await listed.json()).toMatchObject({ runs: [] });
  return statuses;
}

const targets: [string, () => Promise<PostgresDatabase>][] = [
  ['PGlite', async () => openPostgres({ pglite })],
];
if (url) targets.push(['the PostgreSQL server', () => openPostgres(url, { schema: schemas.next() })]);
let pglite: PGlite;
let expected: Record<string, number>;

beforeAll(async () => {
  pglite = await PGlite.create();
  expected = await answers(new Engine({ storage: new MemoryStorage() }));
});
afterAll(async () => {
  await pglite.close();
  await schemas.drop();
});

describe.each(targets)('ids holding U+0000 on %s', (_, open) => {
  it('answers as memory storage does (404, an empty page), with and without a queue', async () => {
    expect(Object.values(expected).every((status) => status === 404 || status === 200)).toBe(true);
    const db = await open();
    try {
      expect(await answers(new Engine({ storage: db.storage }))).toEqual(expected);
      expect(await answers(new Engine({ storage: db.storage, queue: db.queue }))).toEqual(expected);
      const durable = new Engine({ storage: db.storage, queue: db.queue });
      await expect(durable.cancel('a\u0000b')).rejects.toMatchObject({ name: 'NotFoundError' });
    } finally {
      await db.close();
    }
  });

  it('refuses to store a key holding U+0000 or half of a surrogate pair, naming the key', async () => {
    const db = await open();
    const storage: StorageAdapter = db.storage;
    try {
      for (const collection of ['workflows', 'runs'] as const)
        for (const key of ['a\u0000b', 'a\ud800b', 'a\udc00b']) {
          const error = await Promise.resolve(storage.put(collection, key, { n: 1 })).catch(
            (e: unknown) => e,
          );
          expect(error).toMatchObject({
            name: 'ValidationError',
            issues: [
              {
                code: 'invalid_key',
                path: 'key',
                message:
                  'a stored key must not hold U+0000 or half of a surrogate pair (Postgres text cannot)',
              },
            ],
          });
          expect(await storage.list(collection)).toEqual([]);
        }
      // Two keys that would arrive as one (both halves become U+FFFD): the stored one is not the other.
      await storage.put('workflows', 'a\ufffdb', { n: 2 });
      expect(await storage.get('workflows', 'a\ud800b')).toBeUndefined();
    } finally {
      await db.close();
    }
  });
});
