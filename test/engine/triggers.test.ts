import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { z } from 'zod';
import {
  ConflictError,
  Engine,
  MemorySpreadsheets,
  MemoryStorage,
  TriggerFireError,
  ValidationError,
  type TriggerBody,
} from '../../src/index.js';
import type { StorageAdapter } from '../../src/adapters/types.js';
import { createHandler } from '../../src/http/index.js';
import { call } from '../http/helpers.js';
import { settle } from './settle.js';

const DAY = 86_400_000;

/** How the engines of a test run their runs: in process, or on the durable queue of one PGlite database. */
type Mode = 'in process' | 'on the durable queue';
const MODES: Mode[] = ['in process', 'on the durable queue'];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Engines on one storage and one sheet, each counting the runs of `notify` it executed; `wrap`
 * gives an engine its own view of the shared storage.
 */
async function engines(
  count: number,
  rows = 0,
  mode: Mode = 'in process',
  wrap: (storage: StorageAdapter, engine: number) => StorageAdapter = (storage) => storage,
) {
  const db =
    mode === 'in process' ? undefined : await openPostgres(undefined, { queue: { pollSeconds: 0.5 } });
  if (db) cleanups.push(() => db.close());
  const storage = db?.storage ?? new MemoryStorage();
  const cells: (string | number)[][] = [['id', 'name']];
  for (let i = 1; i <= rows; i++) cells.push([i, `row ${i}`]);
  const spreadsheets = new MemorySpreadsheets({ book: { items: cells } });
  const seen: unknown[] = [];
  const list: Engine[] = [];
  for (let i = 0; i < count; i++) {
    const engine = new Engine({
      storage: wrap(storage, i),
      spreadsheets,
      ...(db ? { queue: db.queue } : {}),
    });
    if (db) {
      const worker = engine.work({ concurrency: 2, triggers: false });
      cleanups.push(() => worker.stop());
    }
    engine.actions.register({
      provider: 'test',
      module: 'triggers',
      action: 'note',
      input: z.looseObject({}),
      run: (input) => (seen.push(input), input),
    });
    list.push(engine);
  }
  const [first] = list as [Engine];
  await first.catalog.registerEntity({
    name: 'items',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'name', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'items', origin: { row: 0, col: 0 } },
  });
  await first.workflows.create({
    name: 'notify',
    steps: [
      {
        name: 'note',
        type: 'l2',
        l2_data: { provider: 'test', module: 'triggers', action: 'note', input_data: { got: '{{input}}' } },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
    },
  });
  return { engines: list, seen, spreadsheets };
}

/**
 * Holds the first write of the `watch` trigger's snapshot by the first engine (`wrap` gives it a
 * view of the storage): `reached` resolves when it is held, `release` lets it land, `fail` makes it throw.
 */
function snapshotGate() {
  let release!: () => void;
  let fail!: (error: Error) => void;
  const held = new Promise<void>((resolve, reject) => ((release = resolve), (fail = reject)));
  let reached!: () => void;
  const reachedPut = new Promise<void>((resolve) => (reached = resolve));
  let holding = false;
  const wrap = (storage: StorageAdapter, engine: number): StorageAdapter =>
    engine !== 0
      ? storage
      : new Proxy(storage, {
          get: (target, property) => {
            if (property === 'put')
              return async (...args: Parameters<StorageAdapter['put']>) => {
                if (holding && args[0] === 'trigger_state' && args[1] === 'watch') {
                  holding = false;
                  reached();
                  await held;
                }
                return target.put(...args);
              };
            const value: unknown = Reflect.get(target, property, target);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
  return {
    wrap: (storage: StorageAdapter, engine: number) => wrap(storage, engine),
    /** Holds the next snapshot write of the first engine. */
    get reached() {
      holding = true;
      return reachedPut;
    },
    release: () => release(),
    fail: () => fail(new Error('the engine stopped')),
  };
}

/** Two engines with the entity trigger `watch` on updates of `items`; `rename` renames its row 2. */
async function watched(mode: Mode, wrap: (storage: StorageAdapter, engine: number) => StorageAdapter) {
  const { engines: list, seen, spreadsheets } = await engines(2, 3, mode, wrap);
  const pair = list as [Engine, Engine];
  await pair[0].triggers.create({
    name: 'watch',
    type: 'entity',
    workflow_name: 'notify',
    input_data: { who: 'watcher' },
    entity_data: { entity_name: 'items', events: ['updated'], interval_seconds: 60 },
  });
  const rename = (name: string) => {
    const cells = spreadsheets.cells('book', 'items')!;
    cells[2]![1] = name;
    spreadsheets.setSheet('book', 'items', cells);
  };
  return { engines: pair, seen: seen as { got: { row: { name: string } } }[], rename };
}

describe('engine.triggers', () => {
  it('refuses a bad trigger naming each field, and a taken name', async () => {
    const [engine] = (await engines(1)).engines as [Engine];
    const issues = async (definition: unknown) =>
      ((await engine.triggers.create(definition as TriggerBody).catch((e: unknown) => e)) as ValidationError)
        .issues;
    expect(
      await issues({
        name: 't',
        type: 'schedule',
        workflow_name: 'nope',
        schedule_data: { cron: '0 9 * * 1' },
        input_data: { who: 'x' },
      }),
    ).toContainEqual(expect.objectContaining({ code: 'unknown_workflow', path: 'workflow_name' }));
    expect(
      await issues({
        name: 't',
        type: 'schedule',
        workflow_name: 'notify',
        schedule_data: { cron: '61 * * * *' },
      }),
    ).toContainEqual(expect.objectContaining({ code: 'invalid_cron', path: 'schedule_data.cron' }));
    expect(
      await issues({
        name: 't',
        type: 'schedule',
        workflow_name: 'notify',
        schedule_data: { cron: '0 9 * * 1', timezone: 'Mars/Olympus' },
      }),
    ).toContainEqual(expect.objectContaining({ code: 'invalid_timezone', path: 'schedule_data.timezone' }));
    expect(
      await issues({
        name: 't',
        type: 'schedule',
        workflow_name: 'notify',
        schedule_data: { cron: '0 9 * * 1' },
        input_data: {},
      }),
    ).toContainEqual(expect.objectContaining({ path: 'input_data.who' }));
    expect(
      await issues({ name: 't', type: 'schedule', workflow_name: 'notify', webhook_data: {} }),
    ).toContainEqual(expect.objectContaining({ path: 'schedule_data' }));
    expect(
      await issues({
        name: 't',
        type: 'entity',
        workflow_name: 'notify',
        entity_data: { entity_name: 'ghosts', events: ['created'] },
      }),
    ).toContainEqual(expect.objectContaining({ code: 'unknown_entity', path: 'entity_data.entity_name' }));
    expect(await issues({ name: '../t', type: 'webhook', workflow_name: 'notify' })).toContainEqual(
      expect.objectContaining({ code: 'invalid_name', path: 'name' }),
    );
    await engine.triggers.create({ name: 'hook', type: 'webhook', workflow_name: 'notify' });
    await expect(
      engine.triggers.create({ name: 'hook', type: 'webhook', workflow_name: 'notify' }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect((await engine.triggers.list()).map((t) => t.name)).toEqual(['hook']);
  });
});

describe('cron fields', () => {
  it("check each field's range themselves and quote the item and field as written", async () => {
    const [engine] = (await engines(1)).engines as [Engine];
    const message = async (cron: string) => {
      const error = (await engine.triggers
        .create({
          name: 'c',
          type: 'schedule',
          workflow_name: 'notify',
          input_data: { who: 'x' },
          schedule_data: { cron },
        })
        .catch((e: unknown) => e)) as ValidationError;
      expect(error, cron).toBeInstanceOf(ValidationError);
      expect(error.issues, cron).toHaveLength(1);
      expect(error.issues[0]).toMatchObject({ code: 'invalid_cron', path: 'schedule_data.cron' });
      return error.issues[0]!.message.replace(
        `"${cron}" is not a five-field cron (minute hour day month weekday): `,
        '',
      );
    };
    for (const [cron, why] of [
      ['60 * * * *', 'the minute field has "60": 60 is not from 0 to 59'],
      ['* 24 * * *', 'the hour field has "24": 24 is not from 0 to 23'],
      ['* * 0 * *', 'the day of month field has "0": 0 is not from 1 to 31'],
      ['* * 32 * *', 'the day of month field has "32": 32 is not from 1 to 31'],
      ['* * * 0 *', 'the month field has "0": 0 is not from 1 to 12'],
      ['* * * 13 *', 'the month field has "13": 13 is not from 1 to 12'],
      ['* * * * 8', 'the day of week field has "8": 8 is not from 0 to 7'],
      ['1,2,70 * * * *', 'the minute field has "70": 70 is not from 0 to 59'],
      ['* 1-24 * * *', 'the hour field has "1-24": 24 is not from 0 to 23'],
      ['* * 00-3 * *', 'the day of month field has "00-3": 00 is not from 1 to 31'],
      [
        '999999999999999999 * * * *',
        'the minute field has "999999999999999999": 999999999999999999 is not from 0 to 59',
      ],
      ['5-1 * * * *', 'the minute field has "5-1": the range runs backwards'],
      ['* * * * FRI-MON', 'the day of week field has "FRI-MON": the range runs backwards'],
      ['*/0 * * * *', 'the minute field has "*/0": the step must be from 1 to 60'],
      ['* 1-5/25 * * *', 'the hour field has "1-5/25": the step must be from 1 to 24'],
      ['* * * * 7/2', 'the day of week field has "7/2": a step follows "*" or a range'],
    ])
      expect(await message(cron!), cron).toBe(why);
    for (const [i, cron] of [
      '* * * * 7',
      '0 0 * * 0-7',
      '0 0 * * SAT-SUN',
      '*/60 * * * *',
      '0 0 * * 7-7',
      '00 00 31 12 *',
    ].entries())
      await expect(
        engine.triggers.create({
          name: `ok${i}`,
          type: 'schedule',
          workflow_name: 'notify',
          input_data: { who: 'x' },
          schedule_data: { cron },
        }),
        cron,
      ).resolves.toMatchObject({ name: `ok${i}` });
  });
});

describe.each(MODES)('%s', (mode) => {
  describe('schedules', () => {
    it('two engines ticking the same slot start one run; after downtime one catch-up run', async () => {
      const {
        engines: [a, b],
        seen,
      } = (await engines(2, 0, mode)) as unknown as { engines: [Engine, Engine]; seen: unknown[] };
      await a.triggers.create({
        name: 'monday',
        type: 'schedule',
        workflow_name: 'notify',
        input_data: { who: 'team' },
        schedule_data: { cron: '0 9 * * 1', timezone: 'Europe/Berlin' },
      });
      // The first Monday 09:00 in Berlin after now, and a few minutes past it.
      let slot = Date.now() + DAY;
      while (!(new Date(slot).getUTCDay() === 1)) slot += DAY;
      const monday = new Date(slot);
      monday.setUTCHours(8, 0, 0, 0); // 09:00 Berlin in winter
      const after = new Date(monday.getTime() + 5 * 60_000);
      // Both opened first, so that their ticks read the slot at the same time.
      await Promise.all([a.ready(), b.ready()]);
      const [one, two] = await Promise.all([a.tick(after), b.tick(after)]);
      expect([...one, ...two].map((f) => f.run_id)).toHaveLength(2);
      expect(new Set([...one, ...two].map((f) => f.run_id)).size).toBe(1);
      expect(await a.tick(new Date(after.getTime() + 60_000))).toEqual([]);
      // Three weeks down: one run for the latest slot, not three.
      const later = new Date(monday.getTime() + 21 * DAY + 60_000);
      expect(await b.tick(later)).toHaveLength(1);
      expect(await a.tick(later)).toEqual([]);
      await settle(a);
      expect(seen).toHaveLength(2);
      expect((await a.listRuns({ workflow: 'notify' })).runs).toHaveLength(2);
    });
  });

  describe('entity changes', () => {
    it('over 1,000 rows with 10 changes start 10 runs, once, also for a second engine', async () => {
      const {
        engines: [a, b],
        seen,
        spreadsheets,
      } = (await engines(2, 1000, mode)) as unknown as {
        engines: [Engine, Engine];
        seen: { got: { event: string; key: { id: number }; row: unknown; previous: unknown } }[];
        spreadsheets: MemorySpreadsheets;
      };
      await a.triggers.create({
        name: 'items changed',
        type: 'entity',
        workflow_name: 'notify',
        input_data: { who: 'watcher' },
        entity_data: {
          entity_name: 'items',
          events: ['created', 'updated', 'deleted'],
          interval_seconds: 60,
        },
      });
      const t0 = new Date(Date.now() + DAY);
      expect(await a.tick(t0)).toEqual([]); // the first poll seeds
      const cells = spreadsheets.cells('book', 'items')!;
      for (const i of [10, 20, 30, 40]) cells[i]![1] = `renamed ${i}`; // 4 updates
      cells.splice(998, 3); // rows 998, 999, 1000 deleted
      cells.push([2001, 'new a'], [2002, 'new b'], [2003, 'new c']); // 3 created
      spreadsheets.setSheet('book', 'items', cells);
      expect(await a.tick(new Date(t0.getTime() + 30_000))).toEqual([]); // not yet: interval
      const t1 = new Date(t0.getTime() + 61_000);
      const [one, two] = await Promise.all([a.tick(t1), b.tick(t1)]);
      const runs = new Set([...one, ...two].map((f) => f.run_id));
      expect(runs.size).toBe(10);
      expect(await b.tick(new Date(t1.getTime() + 61_000))).toEqual([]);
      await settle(a);
      expect(seen).toHaveLength(10);
      const events = seen.map((s) => s.got.event).sort();
      expect(events).toEqual([
        ...Array(3).fill('created'),
        ...Array(3).fill('deleted'),
        ...Array(4).fill('updated'),
      ]);
      const renamed = seen.find((s) => s.got.event === 'updated' && s.got.key.id === 10)!.got;
      expect(renamed).toMatchObject({
        row: { id: 10, name: 'renamed 10' },
        previous: { id: 10, name: 'row 10' },
      });
    });
    it('a row state fires once when two engines compare one snapshot and write theirs in either order', async () => {
      // Without a claim, a compared the snapshot while b did too, and a's older snapshot, written
      // last, made the next poll fire b's row state again.
      const gate = snapshotGate();
      const { engines: pair, seen, rename } = await watched(mode, gate.wrap);
      const [a, b] = pair;
      const t0 = new Date(Date.now() + DAY);
      expect(await a.tick(t0)).toEqual([]);
      rename('first');
      const t1 = new Date(t0.getTime() + 61_000);
      const first = a.tick(t1);
      await gate.reached; // a has compared and fired "first", and is about to write its snapshot
      rename('second');
      const fromB = await b.tick(t1);
      gate.release();
      const fromA = await first;
      const t2 = new Date(t1.getTime() + 61_000);
      const later = [...(await a.tick(t2)), ...(await b.tick(t2))];
      expect(await a.tick(new Date(t2.getTime() + 61_000))).toEqual([]);
      await settle(a);
      await settle(b);
      // "first" and "second" each fired once: b left the snapshot to a, and the next poll saw "second".
      expect(fromB).toEqual([]);
      expect(fromA).toHaveLength(1);
      expect(later).toHaveLength(1);
      expect(seen.map((s) => s.got.row.name)).toEqual(['first', 'second']);
    });

    it('an engine that stopped while comparing holds the snapshot for 5 minutes, then another takes over', async () => {
      const gate = snapshotGate();
      const { engines: pair, seen, rename } = await watched(mode, gate.wrap);
      const [a, b] = pair;
      const t0 = new Date(Date.now() + DAY);
      expect(await a.tick(t0)).toEqual([]);
      rename('changed');
      const t1 = new Date(t0.getTime() + 61_000);
      const stuck = a.tick(t1).catch((error: unknown) => error);
      await gate.reached; // a hangs before writing its snapshot, as if its process had stopped
      expect(await b.tick(new Date(t1.getTime() + 4 * 60_000))).toEqual([]);
      const takeover = await b.tick(new Date(t1.getTime() + 5 * 60_000 + 1_000));
      // b compares the same snapshot: the row state a fired is the same run, not a second one.
      expect(takeover).toMatchObject([{ trigger: 'watch', replayed: true }]);
      gate.fail();
      expect(await stuck).toBeInstanceOf(TriggerFireError);
      await settle(a);
      await settle(b);
      expect(seen.map((s) => s.got.row.name)).toEqual(['changed']);
      expect(await b.tick(new Date(t1.getTime() + 7 * 60_000))).toEqual([]);
    });
  });

  describe('webhooks', () => {
    it('check the signature in constant time, refuse unsigned calls, and start one run per Idempotency-Key', async () => {
      const {
        engines: [engine],
        seen,
      } = (await engines(1, 0, mode)) as unknown as { engines: [Engine]; seen: unknown[] };
      const secret = 'a webhook secret, 32 characters!';
      await engine.triggers.create({
        name: 'incoming',
        type: 'webhook',
        workflow_name: 'notify',
        input_data: { who: 'default' },
        webhook_data: { secret },
      });
      const handler = createHandler(engine);
      const body = JSON.stringify({ who: 'caller' });
      const sign = (text: string) => `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`;
      const unsigned = await call(handler, 'POST', '/hooks/incoming', body);
      expect(unsigned.status).toBe(401);
      const wrong = await call(handler, 'POST', '/hooks/incoming', body, {
        'x-stepwire-signature': sign('other'),
      });
      expect(wrong.status).toBe(401);
      expect((await engine.listRuns()).runs).toHaveLength(0);
      const headers = { 'x-stepwire-signature': sign(body), 'idempotency-key': 'delivery-1' };
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => call(handler, 'POST', '/hooks/incoming', body, headers)),
      );
      expect(answers.filter((a) => a.status === 202)).toHaveLength(1);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(49);
      expect(new Set(answers.map((a) => a.body.run_id)).size).toBe(1);
      await settle(engine);
      expect(seen).toEqual([{ got: { who: 'caller' } }]);
      const shown = await call(handler, 'GET', '/triggers/incoming');
      expect(shown.body.webhook_data.secret).toBe('********');
    });
  });
});
