import { describe, expect, it } from 'vitest';
import { Engine, MemorySpreadsheets } from '../../src/index.js';
import { settle } from './settle.js';

async function engineWithTriggers(): Promise<Engine> {
  const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ s: { A: [['id'], [1]] } }) });
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
  await engine.catalog.registerEntity({
    name: 'items',
    columns: [{ name: 'id', type: 'NUMBER' }],
    primary_key: ['id'],
    spreadsheet_config: { spreadsheet_id: 's', sheet_name: 'A', origin: { row: 0, col: 0 } },
  });
  await engine.triggers.create({
    name: 'daily',
    type: 'schedule',
    workflow_name: 'w',
    schedule_data: { cron: '0 0 * * *' },
  });
  await engine.triggers.create({
    name: 'watch',
    type: 'entity',
    workflow_name: 'w',
    entity_data: { entity_name: 'items', events: ['created'] },
  });
  return engine;
}

describe('engine.tick(now)', () => {
  it('takes epoch milliseconds (a Workers scheduledTime) as well as a Date', async () => {
    const engine = await engineWithTriggers();
    const fired = await engine.tick(Date.parse('2099-01-01T00:05:00Z'));
    expect(fired.map((f) => f.trigger)).toEqual(['daily']);
    expect(await engine.tick(Date.parse('2099-01-01T23:59:00Z'))).toEqual([]);
    expect((await engine.tick(new Date('2099-01-02T00:00:00Z'))).map((f) => f.trigger)).toEqual(['daily']);
    await settle(engine);
  });

  it('refuses anything else with a TypeError naming now, and fires nothing', async () => {
    const engine = await engineWithTriggers();
    for (const now of [new Date('nope'), '2099-01-01T00:00:00Z', null, Number.NaN, Infinity, 1e20, {}]) {
      const error = await engine.tick(now as never).catch((e: unknown) => e);
      expect(error, String(now)).toBeInstanceOf(TypeError);
      expect((error as TypeError).message, String(now)).toMatch(
        /^now must be a valid Date or a number of milliseconds since 1970, got /,
      );
    }
    // Nothing was recorded: the next tick is the first one of each trigger.
    expect((await engine.tick(new Date('2099-01-01T00:05:00Z'))).map((f) => f.trigger)).toEqual(['daily']);
    expect(await engine.listRuns({ workflow: 'w' })).toMatchObject({ runs: [expect.anything()] });
    await settle(engine);
  });
});
