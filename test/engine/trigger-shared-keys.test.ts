import { describe, expect, it } from 'vitest';
import { TriggerFireError, type TriggerFiring } from '../../src/index.js';
import { notingEngine } from './noting-engine.js';
import { settle } from './settle.js';

/** An engine whose entity trigger on `people` (id, name) records the input of each run it starts. */
async function setUp() {
  const {
    engine,
    spreadsheets,
    seen: inputs,
  } = await notingEngine('people', 'name', [
    [1, 'alice'],
    [2, 'bob'],
  ]);
  /** Each run's input as `event key previous -> row`. */
  const seen = () =>
    (inputs as Record<string, { name?: string } | null>[]).map(
      ({ event, key, row, previous }) =>
        `${String(event)} ${JSON.stringify(key)} ${previous?.name ?? '-'} -> ${row?.name ?? '-'}`,
    );
  await engine.triggers.create({
    name: 'people-changes',
    type: 'entity',
    workflow_name: 'flow',
    entity_data: { entity_name: 'people', events: ['created', 'updated', 'deleted'], interval_seconds: 1 },
  });
  let at = Date.now();
  await engine.tick(new Date(at));
  /** Sets the sheet's rows, polls, and gives what fired and the error of the poll, if any. */
  const poll = async (rows: (string | number)[][]) => {
    spreadsheets.setSheet('book', 'people', [['id', 'name'], ...rows]);
    at += 2000;
    let error: TriggerFireError | undefined;
    let fired: TriggerFiring[];
    try {
      fired = await engine.tick(new Date(at));
    } catch (e) {
      error = e as TriggerFireError;
      fired = error.fired;
    }
    await settle(engine);
    return { fired, error: error?.failures.map((f) => (f.error as Error).message) };
  };
  return { poll, seen };
}

describe('entity triggers: rows without a key of their own', () => {
  it('holds a key that two rows share at its last known row, says so each poll, and compares again once one row holds it', async () => {
    const { poll, seen } = await setUp();
    const added = await poll([
      [1, 'alice'],
      [2, 'bob'],
      [1, 'carol'],
    ]);
    expect(added.fired).toEqual([]);
    expect(added.error).toEqual([
      'entity "people" has rows that share a primary key, so their changes cannot be told apart: {"id":1} (2 rows); give each row its own key (until then these keys fire nothing)',
    ]);
    // Editing one of the two rows fires nothing either, and is said again; the other keys fire as ever.
    const edited = await poll([
      [1, 'ALICE'],
      [2, 'bobby'],
      [1, 'carol'],
    ]);
    expect(edited.error).toHaveLength(1);
    expect(seen()).toEqual(['updated {"id":2} bob -> bobby']);
    // One row holds the key again: it compares with the row last known for it.
    const fixed = await poll([
      [2, 'bobby'],
      [1, 'carol'],
    ]);
    expect(fixed.error).toBeUndefined();
    expect(seen()).toEqual(['updated {"id":2} bob -> bobby', 'updated {"id":1} alice -> carol']);
  });

  it('starts no run for a row whose key cell is empty until its key is filled', async () => {
    const { poll, seen } = await setUp();
    const typing = await poll([
      [1, 'alice'],
      [2, 'bob'],
      ['', 'dave'],
      ['', 'erin'],
    ]);
    expect(typing).toEqual({ fired: [], error: undefined });
    await poll([
      [1, 'alice'],
      [2, 'bob'],
      [3, 'dave'],
      ['', 'erin'],
    ]);
    await poll([
      [1, 'alice'],
      [2, 'bob'],
      [3, 'dave'],
      [4, 'erin'],
    ]);
    expect(seen()).toEqual(['created {"id":3} - -> dave', 'created {"id":4} - -> erin']);
  });
});
