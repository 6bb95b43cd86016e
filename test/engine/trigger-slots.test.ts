import { describe, expect, it } from 'vitest';
import { Engine, ValidationError } from '../../src/index.js';
import { settle } from './settle.js';

// Slots lie in 2099 and later, well after the triggers are created (a schedule fires no slot before
// its creation), so these tests hold whenever they run. 2099-03-29 and 2099-10-25 are the days
// Europe/Berlin springs forward (02:00 CET -> 03:00 CEST at 01:00Z) and falls back (03:00 CEST ->
// 02:00 CET at 01:00Z).
const MIN = 60_000;
const HOUR = 60 * MIN;

async function engineWith(triggers: Record<string, { cron: string; timezone?: string }>): Promise<Engine> {
  const engine = new Engine();
  await engine.workflows.create({
    name: 'w',
    steps: [
      {
        name: 'd',
        type: 'l2',
        l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: {} },
      },
    ],
    wires: [],
  });
  for (const [name, schedule_data] of Object.entries(triggers))
    await engine.triggers.create({ name, type: 'schedule', workflow_name: 'w', schedule_data });
  return engine;
}

/** Ticks every `stepMs` from `from` to `to` (inclusive): the ticks at which each trigger fired. */
async function tickThrough(engine: Engine, from: string, to: string, stepMs: number) {
  const fired: Record<string, string[]> = {};
  for (let t = Date.parse(from); t <= Date.parse(to); t += stepMs)
    for (const firing of await engine.tick(new Date(t)))
      (fired[firing.trigger] ??= []).push(new Date(t).toISOString());
  await settle(engine);
  return fired;
}

describe('schedules over short months and leap days', () => {
  it('tick without failing on days a cron of short months or Feb 29 does not name', async () => {
    const engine = await engineWith({
      february: { cron: '0 9 * 2 *' },
      'short-months': { cron: '0 9 * 4,6,9,11 *' },
    });
    const fired = await tickThrough(engine, '2099-02-26T06:00:00Z', '2099-03-03T06:00:00Z', 6 * HOUR);
    // The first tick catches up the slot before it (Feb 25); then each February day once, nothing in March.
    expect(fired['february']).toEqual([
      '2099-02-26T06:00:00.000Z',
      '2099-02-26T12:00:00.000Z',
      '2099-02-27T12:00:00.000Z',
      '2099-02-28T12:00:00.000Z',
    ]);
    expect(fired['short-months']).toEqual(['2099-02-26T06:00:00.000Z']); // 2098-11-30's slot, caught up
    const later = await tickThrough(engine, '2099-04-29T06:00:00Z', '2099-05-02T06:00:00Z', 6 * HOUR);
    expect(later['short-months']).toEqual([
      '2099-04-29T06:00:00.000Z',
      '2099-04-29T12:00:00.000Z',
      '2099-04-30T12:00:00.000Z',
    ]);
  });

  it('fire a Feb 29 schedule on leap days only, and catch up the latest one', async () => {
    const engine = await engineWith({ leap: { cron: '0 12 29 2 *' } });
    // 2096 is the last leap year before 2099; 2100 is no leap year; 2104 is.
    expect(await engine.tick(new Date('2099-06-01T00:00:00Z'))).toHaveLength(1);
    expect(await engine.tick(new Date('2100-03-01T00:00:00Z'))).toEqual([]);
    expect(await engine.tick(new Date('2104-02-29T11:59:00Z'))).toEqual([]);
    expect(await engine.tick(new Date('2104-02-29T12:00:00Z'))).toHaveLength(1);
    expect(await engine.tick(new Date('2104-03-01T00:00:00Z'))).toEqual([]);
    await settle(engine);
  });
});

describe('schedules on the days the clock changes (Europe/Berlin)', () => {
  it('spring forward: a slot fires at its time, never before; skipped local times fire at 03:00', async () => {
    const engine = await engineWith({
      quarters: { cron: '*/15 2,3 * * *', timezone: 'Europe/Berlin' },
      'half-past-two': { cron: '30 2 * * *', timezone: 'Europe/Berlin' },
      hourly: { cron: '0 * * * *', timezone: 'Europe/Berlin' },
    });
    // The first tick catches up the day before; 02:00-02:59 does not exist on the day itself.
    const fired = await tickThrough(engine, '2099-03-29T00:40:00Z', '2099-03-29T02:10:00Z', MIN);
    expect(fired['quarters']).toEqual([
      '2099-03-29T00:40:00.000Z', // 2099-03-28 03:45 CET
      '2099-03-29T01:00:00.000Z', // 03:00 CEST, also for 02:00-02:45, which the clock skipped
      '2099-03-29T01:15:00.000Z',
      '2099-03-29T01:30:00.000Z',
      '2099-03-29T01:45:00.000Z',
    ]);
    expect(fired['half-past-two']).toEqual([
      '2099-03-29T00:40:00.000Z', // 2099-03-28 02:30 CET
      '2099-03-29T01:00:00.000Z', // 02:30 does not exist: it fires when the clock jumps, at 03:00 CEST
    ]);
    expect(fired['hourly']).toEqual([
      '2099-03-29T00:40:00.000Z',
      '2099-03-29T01:00:00.000Z',
      '2099-03-29T02:00:00.000Z',
    ]);
  });

  it('fall back: a cron for every hour fires both 02:00s, a fixed 02:30 fires once', async () => {
    const engine = await engineWith({
      hourly: { cron: '0 * * * *', timezone: 'Europe/Berlin' },
      'half-past-two': { cron: '30 2 * * *', timezone: 'Europe/Berlin' },
      'every-half-hour-at-two': { cron: '*/30 2 * * *', timezone: 'Europe/Berlin' },
    });
    const fired = await tickThrough(engine, '2099-10-24T23:55:00Z', '2099-10-25T03:30:00Z', 5 * MIN);
    expect(fired['hourly']).toEqual([
      '2099-10-24T23:55:00.000Z', // catch-up: 01:00 CEST
      '2099-10-25T00:00:00.000Z', // 02:00 CEST
      '2099-10-25T01:00:00.000Z', // 02:00 CET
      '2099-10-25T02:00:00.000Z',
      '2099-10-25T03:00:00.000Z',
    ]);
    expect(fired['half-past-two']).toEqual(['2099-10-24T23:55:00.000Z', '2099-10-25T00:30:00.000Z']);
    expect(fired['every-half-hour-at-two']).toEqual([
      '2099-10-24T23:55:00.000Z',
      '2099-10-25T00:00:00.000Z',
      '2099-10-25T00:30:00.000Z',
      '2099-10-25T01:00:00.000Z',
      '2099-10-25T01:30:00.000Z',
    ]);
  });
});

describe('crons that name no real date', () => {
  it('are refused as never firing, whatever the months and time zone', async () => {
    const engine = await engineWith({});
    for (const [cron, timezone] of [
      ['0 0 31 4,6,9,11 *', 'UTC'],
      ['*/15 8-18/2 31 4,6,9,11 *', 'America/New_York'],
      ['0 0 30 2 *', 'UTC'],
      ['*/5 * 31 2,4 *', 'Europe/Berlin'],
    ] as const) {
      const error = await engine.triggers
        .create({ name: 'never', type: 'schedule', workflow_name: 'w', schedule_data: { cron, timezone } })
        .catch((e: unknown) => e);
      expect(error, cron).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues, cron).toEqual([
        { code: 'invalid_cron', path: 'schedule_data.cron', message: `"${cron}" never fires (no such date)` },
      ]);
    }
    // A day of month that only some of the months have, or a weekday besides it, is fine.
    for (const cron of ['0 0 31 4,5 *', '0 0 30 2 MON', '0 0 29 2 *']) {
      await expect(
        engine.triggers.create({ name: 'ok', type: 'schedule', workflow_name: 'w', schedule_data: { cron } }),
        cron,
      ).resolves.toMatchObject({ name: 'ok' });
      await engine.triggers.delete('ok');
    }
  });
});
