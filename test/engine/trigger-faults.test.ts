/**
 * Triggers when something is wrong or unusual: one trigger that cannot fire does not stop the others,
 * a workflow that triggers start cannot be deleted from under them, the same change made again fires
 * again, callers' run keys never take a trigger's, and definitions outside standard cron are refused.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Engine,
  MemorySpreadsheets,
  TriggerFireError,
  isStepwireError,
  type TriggerBody,
  type ValidationError,
} from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { call } from '../http/helpers.js';
import { settle } from './settle.js';

const DAY = 86_400_000;

/** An engine whose workflow `notify` (input `{ who }`) records what each run got. */
async function setup() {
  const spreadsheets = new MemorySpreadsheets({
    book: {
      items: [
        ['id', 'status'],
        [1, 'open'],
        [2, 'open'],
      ],
    },
  });
  const engine = new Engine({ spreadsheets });
  const seen: { who?: string; event?: string }[] = [];
  engine.actions.register({
    provider: 'test',
    module: 'triggers',
    action: 'note',
    input: z.looseObject({}),
    run: (input) => (seen.push((input as { got: { who?: string; event?: string } }).got), input),
  });
  const workflow = (name: string, required: string[] = ['who']) => ({
    name,
    steps: [
      {
        name: 'note',
        type: 'l2' as const,
        l2_data: { provider: 'test', module: 'triggers', action: 'note', input_data: { got: '{{input}}' } },
      },
    ],
    wires: [],
    workflow_input: {
      name: 'input',
      input_schema: {
        type: 'object' as const,
        properties: { who: { type: 'string' as const }, extra: { type: 'string' as const } },
        required,
      },
    },
  });
  await engine.workflows.create(workflow('notify'));
  await engine.workflows.create(workflow('other'));
  await engine.catalog.registerEntity({
    name: 'items',
    columns: [
      { name: 'id', type: 'NUMBER' },
      { name: 'status', type: 'STRING' },
    ],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'items', origin: { row: 0, col: 0 } },
  });
  return { engine, seen, spreadsheets, workflow };
}

describe('triggers that cannot fire', () => {
  it('fire every other due trigger, then name the one that failed; its slot stays due', async () => {
    const { engine, seen, workflow } = await setup();
    for (const [name, workflow_name] of [
      ['a first', 'notify'],
      ['b second', 'other'],
    ] as const)
      await engine.triggers.create({
        name,
        type: 'schedule',
        workflow_name,
        input_data: { who: name },
        schedule_data: { cron: '0 * * * *' },
      });
    // The first trigger's input no longer fits its workflow.
    await engine.workflows.replace(workflow('notify', ['who', 'extra']));
    const at = new Date(Date.now() + DAY);
    const error = (await engine.tick(at).catch((e: unknown) => e)) as TriggerFireError;
    expect(error).toBeInstanceOf(TriggerFireError);
    expect(error.code).toBe('trigger_failed');
    expect(error.failures.map((f) => f.trigger)).toEqual(['a first']);
    expect(error.message).toMatch(/"a first": .*extra/);
    expect(error.fired.map((f) => f.trigger)).toEqual(['b second']);
    await settle(engine);
    expect(seen.map((s) => s.who)).toEqual(['b second']);
    // Mended, the failed slot fires at the next tick; the other's is done.
    await engine.workflows.replace(workflow('notify'));
    const fired = await engine.tick(new Date(at.getTime() + 1000));
    expect(fired.map((f) => f.trigger)).toEqual(['a first']);
  });

  it('keep their workflow: deleting it is a conflict naming the triggers, until they are gone', async () => {
    const { engine } = await setup();
    for (const name of ['nightly', 'hook'])
      await engine.triggers.create(
        name === 'hook'
          ? { name, type: 'webhook', workflow_name: 'notify', input_data: { who: 'x' } }
          : {
              name,
              type: 'schedule',
              workflow_name: 'notify',
              input_data: { who: 'x' },
              schedule_data: { cron: '0 0 * * *' },
            },
      );
    const refused = await engine.workflows.delete('notify').catch((e: unknown) => e);
    expect(isStepwireError(refused) && refused.code).toBe('conflict');
    expect((refused as Error).message).toBe(
      'workflow "notify" is started by triggers "hook", "nightly": delete them first',
    );
    expect(await engine.workflows.get('notify')).toMatchObject({ name: 'notify' });
    const http = await call(createHandler(engine), 'DELETE', '/workflows/notify');
    expect(http.status).toBe(409);
    expect(http.body.detail).toMatch(/triggers "hook", "nightly"/);
    await engine.triggers.delete('hook');
    await engine.triggers.delete('nightly');
    expect(await engine.workflows.delete('notify')).toBe(true);
  });
});

describe('entity triggers', () => {
  it('fire again when a row goes back and forth (open, closed, open, closed)', async () => {
    const { engine, seen, spreadsheets } = await setup();
    await engine.triggers.create({
      name: 'status',
      type: 'entity',
      workflow_name: 'notify',
      input_data: { who: 'w' },
      entity_data: { entity_name: 'items', events: ['updated', 'deleted', 'created'], interval_seconds: 60 },
    });
    let at = Date.now() + DAY;
    const tick = () => engine.tick(new Date((at += 61_000)));
    await tick(); // seeds the snapshot
    const fired: number[] = [];
    for (const status of ['closed', 'open', 'closed']) {
      const cells = spreadsheets.cells('book', 'items')!;
      cells[1]![1] = status;
      spreadsheets.setSheet('book', 'items', cells);
      fired.push((await tick()).length);
    }
    // Row 2 deleted, created again, deleted again.
    const row2 = spreadsheets.cells('book', 'items')![2]!;
    for (const present of [false, true, false]) {
      const cells = spreadsheets.cells('book', 'items')!.slice(0, 2);
      spreadsheets.setSheet('book', 'items', present ? [...cells, row2] : cells);
      fired.push((await tick()).length);
    }
    expect(fired).toEqual([1, 1, 1, 1, 1, 1]);
    await settle(engine);
    expect(seen.map((s) => s.event)).toEqual([
      'updated',
      'updated',
      'updated',
      'deleted',
      'created',
      'deleted',
    ]);
  });
});

describe('run keys of triggers', () => {
  it("are apart from callers' keys: the same key on the runs route and on a hook starts two runs", async () => {
    const { engine, seen } = await setup();
    await engine.triggers.create({ name: 'open', type: 'webhook', workflow_name: 'notify' });
    const handler = createHandler(engine);
    const key = { 'idempotency-key': 'K2' };
    const byCaller = await call(handler, 'POST', '/workflows/notify/runs', { who: 'caller' }, key);
    expect(byCaller.status).toBe(200);
    expect(byCaller.response.headers.get('idempotent-replayed')).toBeNull();
    // Keys as triggers once spelled them, and the same key, each start their own run.
    const spelled = await call(
      handler,
      'POST',
      '/workflows/notify/runs',
      { who: 'spelled' },
      {
        'idempotency-key': 'hook:open:K2',
      },
    );
    expect(spelled.status).toBe(200);
    expect(spelled.response.headers.get('idempotent-replayed')).toBeNull();
    const hook = await call(handler, 'POST', '/hooks/open', { who: 'hook' }, key);
    expect(hook.status).toBe(202);
    const again = await call(handler, 'POST', '/hooks/open', { who: 'again' }, key);
    expect(again.status).toBe(200);
    expect(again.body.run_id).toBe(hook.body.run_id);
    expect(new Set([byCaller.body.id, spelled.body.id, hook.body.run_id]).size).toBe(3);
    await settle(engine);
    expect(seen.map((s) => s.who).sort()).toEqual(['caller', 'hook', 'spelled']);
  });

  it('a schedule slot fires even when a caller used a key spelled like it', async () => {
    const { engine, seen } = await setup();
    await engine.triggers.create({
      name: 'nightly',
      type: 'schedule',
      workflow_name: 'notify',
      input_data: { who: 'schedule' },
      schedule_data: { cron: '0 0 * * *' },
    });
    const at = new Date(Date.now() + DAY);
    const slot = new Date(at);
    slot.setUTCHours(0, 0, 0, 0);
    for (const key of [`trigger:nightly:${slot.toISOString()}`, `slot:${slot.toISOString()}`])
      await engine.run('notify', { who: 'caller' }, { key });
    const [fired] = await engine.tick(at);
    expect(fired?.replayed).toBe(false);
    await settle(engine);
    expect(seen.map((s) => s.who).sort()).toEqual(['caller', 'caller', 'schedule']);
  });
});

describe('webhook requests', () => {
  it('refuse an empty Idempotency-Key (400) and a body that is not JSON (415), starting nothing', async () => {
    const { engine } = await setup();
    await engine.triggers.create({
      name: 'open',
      type: 'webhook',
      workflow_name: 'notify',
      input_data: { who: 'w' },
    });
    const handler = createHandler(engine);
    const empty = await call(handler, 'POST', '/hooks/open', { who: 'x' }, { 'idempotency-key': '' });
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual([
      {
        code: 'invalid_key',
        path: 'Idempotency-Key',
        message: 'the Idempotency-Key header must have 1 to 255 characters',
      },
    ]);
    // The route that runs a workflow names the header the same way.
    const long = await call(
      handler,
      'POST',
      '/workflows/notify/runs',
      { who: 'x' },
      { 'idempotency-key': 'k'.repeat(256) },
    );
    expect(long.status).toBe(400);
    expect(long.body.errors).toEqual(empty.body.errors);
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const answer = await call(handler, 'POST', '/hooks/open', '{"who":"x"}', { 'content-type': type });
      expect(answer.status, type).toBe(415);
    }
    expect((await engine.listRuns()).runs).toHaveLength(0);
  });
});

describe('trigger definitions', () => {
  it('take standard five-field cron only, IANA zones only, each event once, secrets of 16+ characters', async () => {
    const { engine } = await setup();
    const issues = async (definition: unknown) =>
      ((await engine.triggers.create(definition as TriggerBody).catch((e: unknown) => e)) as ValidationError)
        .issues ?? [];
    const schedule = (cron: string, timezone?: string): TriggerBody => ({
      name: 's',
      type: 'schedule',
      workflow_name: 'notify',
      input_data: { who: 'x' },
      schedule_data: { cron, ...(timezone ? { timezone } : {}) },
    });
    for (const cron of [
      '@daily',
      '0 0 L * *',
      '0 0 * * 5L',
      '0 0 * * 1#2',
      '0 0 15W * *',
      '0 0 ? * *',
      '0 0 0 * * *',
      '0 0 31 2 *',
      '0 0 30 2 *',
    ])
      expect(await issues(schedule(cron)), cron).toContainEqual(
        expect.objectContaining({ code: 'invalid_cron', path: 'schedule_data.cron' }),
      );
    expect((await issues(schedule('0 0 31 2 *')))[0]?.message).toBe(
      '"0 0 31 2 *" never fires (no such date)',
    );
    expect((await issues(schedule('0 0 L * *')))[0]?.message).toBe(
      '"0 0 L * *" is not a five-field cron (minute hour day month weekday): the day of month field has "L"',
    );
    // Text past any real cron or zone is refused by its length, not quoted back whole.
    expect(await issues(schedule('0 9 * * 1', 'Europe/'.repeat(2000)))).toEqual([
      {
        code: 'too_big',
        path: 'schedule_data.timezone',
        message: 'timezone must be at most 100 characters',
      },
    ]);
    expect((await issues(schedule('1,'.repeat(1000) + '1 * * * *')))[0]?.message).toBe(
      'cron must be at most 1000 characters',
    );
    for (const zone of ['+01:00', '-0500', 'Mars/Olympus'])
      expect(await issues(schedule('0 9 * * 1', zone)), zone).toContainEqual(
        expect.objectContaining({ code: 'invalid_timezone', path: 'schedule_data.timezone' }),
      );
    for (const [i, cron] of [
      '*/15 * * * *',
      '0 9 * jan-mar mon-fri',
      '0 0 29 2 *',
      '5,35 8-18/2 1-15 * 0',
    ].entries())
      await expect(
        engine.triggers.create({ ...schedule(cron, 'Europe/Berlin'), name: `ok${i}` }),
      ).resolves.toMatchObject({ name: `ok${i}` });
    expect(
      await issues({
        name: 'e',
        type: 'entity',
        workflow_name: 'notify',
        input_data: { who: 'x' },
        entity_data: { entity_name: 'items', events: ['created', 'created'] },
      }),
    ).toEqual([
      { code: 'duplicate_event', path: 'entity_data.events[1]', message: 'event "created" is listed twice' },
    ]);
    expect(
      await issues({
        name: 'h',
        type: 'webhook',
        workflow_name: 'notify',
        webhook_data: { secret: 'short' },
      }),
    ).toContainEqual(
      expect.objectContaining({
        path: 'webhook_data.secret',
        message: expect.stringMatching(/at least 16 characters/),
      }),
    );
  });
});
