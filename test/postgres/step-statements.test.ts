/**
 * What a durable run costs the PostgreSQL server when the process that starts it also works: the
 * run's insert hands its first step to an idle worker of the process, each step's commit hands over
 * the next one, and the caller hears the run's events from the commits: no statement fetches a job
 * or reads the log, and the final record comes with the last commit (it is not read).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type PostgresDatabase } from '../../src/adapters/postgres/index.js';
import { Engine, type RunEvent, type Workflow } from '../../src/index.js';
import { reachServer, testSchemas } from './server.js';

const url = await reachServer();
const schemas = testSchemas(url);

/** Every statement sent on the pool's connections, as text, while `log` is set. */
let log: string[] | undefined;
/** The name of each statement in `log` sent as a prepared statement (undefined: sent as text). */
let names: (string | undefined)[] = [];

/**
 * What `work` sent on the counting pools: each statement's text, and the name it was prepared under
 * (undefined: sent as text).
 */
async function sentDuring<T>(
  work: () => Promise<T>,
): Promise<{ result: T; sent: string[]; names: (string | undefined)[] }> {
  log = [];
  names = [];
  try {
    const result = await work();
    return { result, sent: log, names };
  } finally {
    log = undefined;
  }
}

function countingPool(connectionString: string): pg.Pool {
  const pool = new pg.Pool({ connectionString });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      const text = typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text;
      if (text !== undefined && log) {
        log.push(text.replace(/\s+/g, ' ').trim());
        names.push(typeof first === 'object' ? (first as { name?: string }).name : undefined);
      }
      return query(...args);
    };
  });
  return pool;
}

function chain(name: string, steps: number): Workflow {
  return {
    name,
    steps: Array.from({ length: steps }, (_, i) => ({
      name: `s${i}`,
      type: 'l2' as const,
      l2_data: {
        provider: 'platform',
        module: 'dummy',
        action: 'dummy_task',
        input_data: { value: i === 0 ? '{{input.value}}' : `{{s${i - 1}.value}}` },
      },
    })),
    wires: [],
  };
}

describe.skipIf(!url)('a durable run started where a worker is idle (PostgreSQL server)', () => {
  let pool: pg.Pool;
  let db: PostgresDatabase;
  let engine: Engine;
  let stop: () => Promise<void>;
  let schema: string;

  beforeAll(async () => {
    pool = countingPool(url!);
    schema = schemas.next();
    db = await openPostgres({ pool }, { schema });
    engine = new Engine({ storage: db.storage, queue: db.queue });
    await engine.workflows.create(chain('three', 3));
    const worker = engine.work({ concurrency: 1, triggers: false });
    stop = () => worker.stop();
    // The first run warms the connections (and the LISTEN one) up.
    expect((await engine.run('three', { value: 1 })).status).toBe('succeeded');
  });

  /**
   * Calls `work` with an engine of another process on the same schema (its own pool and database
   * handle, no worker: its runs go to the first process's worker), closed afterwards.
   */
  async function asAnotherProcess(work: (starter: Engine) => Promise<void>): Promise<void> {
    const otherPool = countingPool(url!);
    const other = await openPostgres({ pool: otherPool }, { schema });
    const starter = new Engine({ storage: other.storage, queue: other.queue });
    try {
      await work(starter);
    } finally {
      await starter.close();
      await other.close();
      await otherPool.end();
    }
  }

  afterAll(async () => {
    await stop?.();
    await db?.close();
    await pool?.end();
    await schemas.drop();
  });

  it('costs one write for its insert and one a step, notifications included: no fetch, no read of its log or of its final record', async () => {
    const events: string[] = [];
    const { result: record, sent } = await sentDuring(() =>
      engine.run('three', { value: 'x' }, { onEvent: (e) => events.push(e.type) }),
    );
    expect(record.status).toBe('succeeded');
    expect((record.output as Record<string, unknown>)['s2']).toEqual({ value: 'x' });
    expect(events.filter((type) => type === 'step.succeeded')).toHaveLength(3);
    expect(events.at(-1)).toBe('run.finished');
    const of = (pattern: RegExp) => sent.filter((text) => pattern.test(text)).length;
    // The run's insert and its three steps' commits.
    expect(of(/"write_runs"\(/)).toBe(4);
    expect(of(/"step_jobs" where \(state = 'ready'/)).toBe(0);
    expect(of(/from \S+\."run_events"/)).toBe(0);
    // The final record is the one the last commit wrote: it is not read.
    expect(of(/^select record::text/)).toBe(0);
    // Nothing else: each write sends the notification the other processes hear the run by.
    expect(sent).toHaveLength(4);
    // And the record given is the one stored.
    expect(record).toEqual(await engine.getRun(record.id));
  });

  it('sends the writes as one prepared statement, which the server keeps on the connections that ran it', async () => {
    const { result, sent, names } = await sentDuring(() => engine.run('three', { value: 'p' }));
    expect(result.status).toBe('succeeded');
    const writes = names.filter((_, i) => /"write_runs"\(/.test(sent[i]!));
    expect(writes).toHaveLength(4);
    expect(new Set(writes).size).toBe(1);
    expect(writes[0]).toMatch(/^stepwire_q\d+$/);
    // Every idle connection of the pool at once: those that ran a write hold it prepared.
    const clients = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
    try {
      const held = await Promise.all(
        clients.map(async (client) => {
          const { rows } = await client.query<{ name: string; statement: string }>(
            'select name, statement from pg_prepared_statements',
          );
          return rows;
        }),
      );
      const prepared = held.flat().filter((row) => row.name === writes[0]);
      expect(prepared.length).toBeGreaterThan(0);
      expect(prepared[0]!.statement).toContain(`"${schema}"."write_runs"($1, $2::int, $3::text)`);
    } finally {
      for (const client of clients) client.release();
    }
  });

  it('with preparedStatements: false, sends every statement as text, and runs go on the same', async () => {
    const textPool = countingPool(url!);
    const own = await openPostgres({ pool: textPool }, { schema: schemas.next(), preparedStatements: false });
    const textEngine = new Engine({ storage: own.storage, queue: own.queue });
    const worker = textEngine.work({ concurrency: 1, triggers: false });
    try {
      await textEngine.workflows.create(chain('three', 3));
      const { result: record, sent, names } = await sentDuring(() => textEngine.run('three', { value: 't' }));
      expect(record.status).toBe('succeeded');
      expect((record.output as Record<string, unknown>)['s2']).toEqual({ value: 't' });
      expect(sent.filter((text) => /"write_runs"\(/.test(text))).toHaveLength(4);
      expect(names.filter((name) => name !== undefined)).toEqual([]);
    } finally {
      await worker.stop();
      await textEngine.close();
      await own.close();
      await textPool.end();
    }
  });

  it('another process following a run it started hears every event and the final record from the writes: it reads neither', async () => {
    await asAnotherProcess(async (starter) => {
      expect((await starter.run('three', { value: 0 })).status).toBe('succeeded');
      const events: string[] = [];
      const { result: record, sent } = await sentDuring(() =>
        starter.run('three', { value: 'y' }, { onEvent: (e) => events.push(e.type) }),
      );
      expect(record.status).toBe('succeeded');
      expect((record.output as Record<string, unknown>)['s2']).toEqual({ value: 'y' });
      expect(events.filter((type) => type === 'step.succeeded')).toHaveLength(3);
      expect(events.at(-1)).toBe('run.finished');
      expect(sent.filter((text) => /from \S+\."run_events"/.test(text))).toEqual([]);
      expect(sent.filter((text) => /^select pg_notify\(/.test(text))).toEqual([]);
      // The last commit's notification carried the record: it is not read.
      expect(sent.filter((text) => /^select record::text/.test(text))).toEqual([]);
      expect(record).toEqual(await engine.getRun(record.id));
    });
  });

  it('a final record too large for a notification is read by the other process, once', async () => {
    // The first step's output, 6,000 characters of 2 bytes, is in the record: 12 KB in UTF-8.
    const large = chain('large', 2);
    const first = large.steps[0] as Extract<Workflow['steps'][number], { type: 'l2' }>;
    first.l2_data.input_data = { value: 'é'.repeat(6000) };
    await engine.workflows.create(large);
    await asAnotherProcess(async (starter) => {
      const { result: record, sent } = await sentDuring(() => starter.run('large', { value: 'z' }));
      expect(record.status).toBe('succeeded');
      expect((record.output as Record<string, { value: string }>)['s1']!.value).toBe('é'.repeat(6000));
      expect(record).toEqual(await engine.getRun(record.id));
      expect(sent.filter((text) => /^select record::text/.test(text))).toHaveLength(1);
    });
  });

  it('events too large for a notification: the step commits, and another process reads them from the log', async () => {
    await engine.workflows.create({
      name: 'big',
      steps: [
        {
          name: 'a',
          type: 'l2',
          l2_data: {
            provider: 'platform',
            module: 'workflows',
            action: 'run_workflow',
            input_data: { workflow_name: '{{input.value}}', input: {} },
          },
        },
      ],
      wires: [],
    });
    await asAnotherProcess(async (starter) => {
      // A workflow name of 3,000 characters of 3 bytes each: the step's failure names it, and its
      // event is 9 KB, more than a notification takes (8,000 bytes).
      const value = '€'.repeat(3000);
      const events: RunEvent[] = [];
      const record = await starter.run('big', { value }, { onEvent: (e) => events.push(e) });
      expect(record.status).toBe('failed');
      expect(events.map((e) => e.type)).toEqual([
        'run.started',
        'step.started',
        'step.failed',
        'run.finished',
      ]);
      const failed = events[2] as Extract<RunEvent, { type: 'step.failed' }>;
      expect(failed.error.message).toContain(value);
      expect(record).toEqual(await engine.getRun(record.id));
    });
  });

  it('a run started while the worker is busy waits for it, and both finish', async () => {
    const [first, second] = await Promise.all([
      engine.run('three', { value: 'a' }),
      engine.run('three', { value: 'b' }),
    ]);
    expect([first.status, second.status]).toEqual(['succeeded', 'succeeded']);
    expect([first, second].map((r) => (r.output as Record<string, unknown>)['s2'])).toEqual([
      { value: 'a' },
      { value: 'b' },
    ]);
  });
});
