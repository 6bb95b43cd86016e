/**
 * The PostgreSQL server the Postgres tests use: `STEPWIRE_PG_URL`, by default
 * `postgres://postgres@127.0.0.1:5432/test`. When it cannot be reached, the server tests are left out
 * with a notice; under CI (the `CI` environment variable set) an unreachable server fails instead, so
 * CI never passes without having run them. Each test file gets schemas of its own, dropped at the end.
 */
import pg from 'pg';

/** Address of the test server. */
export const SERVER_URL = process.env.STEPWIRE_PG_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** Whether the tests run under CI. */
export function underCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/**
 * Resolves to the server's URL when it answers, to `undefined` (after a notice) when it does not;
 * rejects under CI when it does not.
 */
export async function reachServer(url = SERVER_URL, ci = underCi()): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return url;
  } catch (error) {
    const why = `PostgreSQL at ${url} is not reachable (${(error as Error).message})`;
    if (ci) throw new Error(`${why}; under CI the server tests must run. Set STEPWIRE_PG_URL.`);
    console.warn(`notice: ${why}; the server tests are left out. Set STEPWIRE_PG_URL to run them.`);
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Schema names for one test file: `stepwire_test_<random>_<n>`, all dropped by `drop()`. */
export function testSchemas(url: string | undefined): { next(): string; drop(): Promise<void> } {
  const prefix = `stepwire_test_${Math.random().toString(36).slice(2, 10)}`;
  const made: string[] = [];
  return {
    next() {
      const name = `${prefix}_${made.length}`;
      made.push(name);
      return name;
    },
    async drop() {
      if (!url || made.length === 0) return;
      const client = new pg.Client(url);
      await client.connect();
      try {
        for (const name of made)
          await client.query(`drop schema if exists ${client.escapeIdentifier(name)} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}
