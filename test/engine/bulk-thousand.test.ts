/**
 * Bulk cancel of 1,000 runs through `POST /runs/bulk` on the PostgreSQL server (else PGlite): the dry
 * run counts exactly the waiting runs of the workflow; the cancel acts on exactly those while new runs
 * start, answers what it did, and every one of them ends cancelled (its approval gone), the runs
 * started meanwhile and the other workflow's runs untouched.
 */
import { afterAll, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { createHandler } from '../../src/http/index.js';
import { Engine, type RunRecord, type RunSummary, type WorkflowBody } from '../../src/index.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
afterAll(() => schemas.drop());

const RUNS = 1000;

const hold = (name: string): WorkflowBody => ({
  name,
  steps: [
    {
      name: 'ok',
      type: 'wait',
      wait_data: { kind: 'approval', title: `Go on with ${name}?`, assignees: { roles: ['ops'] } },
    },
  ],
  wires: [],
});

/** Starts `count` runs of `workflow`, twenty at a time; each waits for its approval. */
async function start(engine: Engine, workflow: string, count: number): Promise<RunRecord[]> {
  const started: RunRecord[] = [];
  for (let i = 0; i < count; i += 20)
    started.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(20, count - i) }, () => engine.run(workflow, { n: i })),
      )),
    );
  return started;
}

/** Every run of a workflow (newest first), through the storage's keyset pages. */
async function allRuns(engine: Engine, workflow: string): Promise<RunSummary[]> {
  const runs: RunSummary[] = [];
  let after: string | undefined;
  do {
    const page = await engine.listRuns({ workflow, limit: 500, ...(after ? { after } : {}) });
    runs.push(...page.runs);
    after = page.next;
  } while (after);
  return runs;
}

it('POST /runs/bulk cancels 1,000 waiting runs, exactly those it counted, while new runs start', async () => {
  const db = url ? await openPostgres(url, { schema: schemas.next() }) : await openPostgres();
  const engine = new Engine({ storage: db.storage });
  try {
    const handler = createHandler(engine);
    const bulk = async (body: unknown) => {
      const response = await handler(
        new Request('http://127.0.0.1/runs/bulk', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      expect(response.status).toBe(200);
      return (await response.json()) as { count: number; runs: string[]; done?: number; failed?: unknown[] };
    };
    await engine.workflows.create(hold('hold'));
    await engine.workflows.create(hold('other'));
    const waiting = await start(engine, 'hold', RUNS);
    expect(waiting.every((run) => run.status === 'waiting')).toBe(true);
    const others = await start(engine, 'other', 10);
    // Runs of the workflow that ended already are not selected.
    const ended = await start(engine, 'hold', 5);
    for (const run of ended) expect(await engine.cancel(run.id)).toBe(true);

    const filter = { workflow: 'hold', status: 'waiting' };
    const dry = await bulk({ action: 'cancel', filter, dry_run: true });
    expect(dry.count).toBe(RUNS);
    expect(dry.done).toBeUndefined();
    expect(new Set(dry.runs)).toEqual(new Set(waiting.map((run) => run.id)));
    // Newest first, as the runs list gives them.
    const listed = (await allRuns(engine, 'hold')).filter((run) => run.status === 'waiting');
    expect(dry.runs).toEqual(listed.map((run) => run.id));
    // Counting changed nothing.
    expect((await engine.getRun(waiting[0]!.id)).status).toBe('waiting');

    // The cancel acts on the runs counted; runs started meanwhile are not touched.
    const cancelling = bulk({ action: 'cancel', runs: dry.runs });
    const late = await start(engine, 'hold', 10);
    const done = await cancelling;
    expect(done).toEqual({ count: RUNS, runs: dry.runs, done: RUNS });

    const after = new Map((await allRuns(engine, 'hold')).map((run) => [run.id, run.status]));
    expect(after.size).toBe(RUNS + ended.length + late.length);
    for (const run of [...waiting, ...ended]) expect(after.get(run.id)).toBe('cancelled');
    for (const run of late) expect(after.get(run.id)).toBe('waiting');
    for (const run of others) expect((await engine.getRun(run.id)).status).toBe('waiting');
    // A cancelled run's record says so, with its wait ended; its approval is gone from the inbox.
    const record = await engine.getRun(waiting[RUNS - 1]!.id);
    expect(record).toMatchObject({ status: 'cancelled', finished_at: expect.any(String) });
    const open = (await engine.approvals.list()).map((approval) => approval.run_id).sort();
    expect(open).toEqual([...late, ...others].map((run) => run.id).sort());

    // Again by filter: only the runs started meanwhile are left to cancel; cancelling them twice fails each.
    const again = await bulk({ action: 'cancel', filter });
    expect(again).toMatchObject({ count: late.length, done: late.length });
    expect(new Set(again.runs)).toEqual(new Set(late.map((run) => run.id)));
    const twice = await bulk({ action: 'cancel', runs: late.map((run) => run.id) });
    expect(twice.count).toBe(late.length);
    expect(twice.done).toBe(0);
    expect(twice.failed).toHaveLength(late.length);
    expect(twice.failed![0]).toMatchObject({ code: 'conflict' });
  } finally {
    await engine.close();
    await db.close();
  }
}, 300_000);
