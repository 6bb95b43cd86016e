import { describe, expect, it } from 'vitest';
import { TriggerFireError, ValidationError, type Engine, type TriggerBody } from '../../src/index.js';
import { notingEngine } from './noting-engine.js';
import { settle } from './settle.js';

/** An engine with entity `items` (id, status) and a workflow `flow` taking `input_schema`. */
function setUp(inputSchema: Record<string, unknown>) {
  return notingEngine('items', 'status', [[1, 'open']], inputSchema);
}

/** The issues a refused trigger lists, as `path code`, sorted. */
async function refused(engine: Engine, definition: unknown): Promise<string[]> {
  const error: unknown = await engine.triggers.create(definition as TriggerBody).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues.map((i) => `${i.path} ${i.code}`).sort();
}

const STRICT = {
  type: 'object',
  additionalProperties: false,
  properties: {
    who: { type: 'string' },
    amount: { type: 'number' },
    note: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    event: { enum: ['created', 'updated'] },
    key: { type: 'object' },
    row: { type: 'object' },
    previous: { type: 'object' },
  },
  required: ['who'],
};

describe('a trigger definition names each unknown property at its own path', () => {
  it('lists every unknown property, at the top level and inside, as the input check does', async () => {
    const { engine } = await setUp({ type: 'object' });
    const hook = { name: 'hook', type: 'webhook', workflow_name: 'flow', input_data: {} };
    expect(await refused(engine, { ...hook, colour: 'red', 'odd.key': 1 })).toEqual([
      '["odd.key"] unknown_property',
      'colour unknown_property',
    ]);
    const error = (await engine.triggers
      .create({ ...hook, type: 'schedule', cron: '0 9 * * *', webhook: true } as never)
      .catch((e: unknown) => e)) as ValidationError;
    expect(error.issues).toContainEqual({
      code: 'unknown_property',
      path: 'webhook',
      message: 'unknown property "webhook"; no other properties are allowed here',
    });
  });
});

describe('a trigger’s input_data is checked against the workflow when the trigger is created', () => {
  it('webhook: what input_data holds must fit (the body may add properties, never remove one)', async () => {
    const { engine } = await setUp(STRICT);
    const hook = (input_data: Record<string, unknown>): TriggerBody => ({
      name: 'hook',
      type: 'webhook',
      workflow_name: 'flow',
      input_data,
    });
    expect(await refused(engine, hook({ amount: 'ten', extra: 1, note: {} }))).toEqual([
      'input_data.amount invalid_type',
      'input_data.extra unknown_property',
      'input_data.note.text required',
    ]);
    const error = (await engine.triggers
      .create(hook({ 'odd.key': 1 }))
      .catch((e: unknown) => e)) as ValidationError;
    expect(error.issues).toEqual([
      {
        code: 'unknown_property',
        path: 'input_data["odd.key"]',
        message: expect.stringContaining('odd.key'),
      },
    ]);
    // `who` is required but the body may bring it: a webhook without it is fine.
    await expect(engine.triggers.create(hook({ amount: 10 }))).resolves.toMatchObject({ name: 'hook' });
  });

  it('entity: input_data, each listed event, a null row or previous and a missing property are refused', async () => {
    const { engine } = await setUp(STRICT);
    const error = (await engine.triggers
      .create({
        name: 'changes',
        type: 'entity',
        workflow_name: 'flow',
        input_data: { amount: 'ten', row: 'replaced by the row' },
        entity_data: { entity_name: 'items', events: ['created', 'deleted', 'updated'] },
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues.map((i) => `${i.path} ${i.code}`).sort()).toEqual([
      // created: previous is null; deleted: event is not in the enum, and row is null.
      'entity_data.events[0] invalid_type',
      'entity_data.events[1] invalid_type',
      'entity_data.events[1] invalid_value',
      'input_data.amount invalid_type',
      'input_data.who required',
    ]);
    const messages = error.issues.filter((i) => i.path.startsWith('entity_data')).map((i) => i.message);
    expect(messages).toContainEqual(expect.stringMatching(/^the input of a run for a created row: previous/));
    expect(messages).toContainEqual(expect.stringMatching(/^the input of a run for a deleted row: row/));
    expect(messages).toContainEqual(expect.stringMatching(/^the input of a run for a deleted row: event/));
  });

  it('entity: key, row and previous must be able to hold the entity’s columns', async () => {
    const { engine } = await setUp({
      type: 'object',
      properties: {
        key: { type: 'object', properties: { id: {} }, required: ['id', 'code'] },
        row: { type: 'object', properties: { id: {} }, additionalProperties: false },
        previous: { type: 'array' },
      },
    });
    const error = (await engine.triggers
      .create({
        name: 'changes',
        type: 'entity',
        workflow_name: 'flow',
        entity_data: { entity_name: 'items', events: ['updated'] },
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error.issues.map((i) => `${i.path} ${i.code}`).sort()).toEqual([
      'entity_data.entity_name invalid_type',
      'entity_data.entity_name required',
      'entity_data.entity_name unknown_property',
    ]);
    expect(error.issues.map((i) => i.message).sort()).toEqual([
      expect.stringMatching(/^key holds the columns of entity "items": key\.code/),
      expect.stringMatching(/^previous holds the columns of entity "items": previous/),
      expect.stringMatching(/^row holds the columns of entity "items": row\.status/),
    ]);
  });

  it('entity: rules on the column values are left to each run, and the trigger fires as it should', async () => {
    const { engine, spreadsheets, seen } = await setUp({
      type: 'object',
      additionalProperties: false,
      properties: {
        source: { const: 'sheet' },
        event: { enum: ['created', 'updated', 'deleted'] },
        key: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] },
        row: {
          anyOf: [
            { type: 'null' },
            {
              type: 'object',
              properties: { status: { enum: ['open', 'closed'] }, id: { type: 'number' } },
              required: ['id', 'status'],
            },
          ],
        },
        previous: { type: ['object', 'null'], properties: { status: { type: 'string', minLength: 1 } } },
      },
      required: ['source', 'event', 'key', 'row', 'previous'],
    });
    await engine.triggers.create({
      name: 'changes',
      type: 'entity',
      workflow_name: 'flow',
      input_data: { source: 'sheet' },
      entity_data: { entity_name: 'items', events: ['created', 'updated', 'deleted'], interval_seconds: 1 },
    });
    const t0 = Date.now();
    await engine.tick(new Date(t0));
    spreadsheets.setSheet('book', 'items', [
      ['id', 'status'],
      [1, 'closed'],
    ]);
    await engine.tick(new Date(t0 + 2000));
    await settle(engine);
    expect(seen).toEqual([
      {
        source: 'sheet',
        event: 'updated',
        key: { id: 1 },
        row: { id: 1, status: 'closed' },
        previous: { id: 1, status: 'open' },
      },
    ]);
  });

  it('entity: an input schema that allows no key or no row property is refused when the trigger is created', async () => {
    const { engine } = await setUp({
      type: 'object',
      properties: { event: {}, previous: {} },
      additionalProperties: false,
    });
    const error = (await engine.triggers
      .create({
        name: 'changes',
        type: 'entity',
        workflow_name: 'flow',
        entity_data: { entity_name: 'items', events: ['created'] },
      })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues.map((i) => `${i.path} ${i.code}`).sort()).toEqual([
      'entity_data.entity_name unknown_property',
      'entity_data.entity_name unknown_property',
    ]);
    expect(error.issues.map((i) => i.message).sort()).toEqual([
      expect.stringMatching(/^key holds the columns of entity "items": key: unknown property "key"/),
      expect.stringMatching(/^row holds the columns of entity "items": row: unknown property "row"/),
    ]);
  });

  it('entity: a row whose values the input refuses fails alone; the rows after it fire, and it fails once', async () => {
    const { engine, spreadsheets, seen } = await setUp({
      type: 'object',
      properties: {
        row: { type: ['object', 'null'], properties: { status: { type: 'string', maxLength: 6 } } },
      },
    });
    await engine.triggers.create({
      name: 'changes',
      type: 'entity',
      workflow_name: 'flow',
      entity_data: { entity_name: 'items', events: ['created'], interval_seconds: 1 },
    });
    const t0 = Date.now();
    await engine.tick(new Date(t0));
    spreadsheets.setSheet('book', 'items', [
      ['id', 'status'],
      [1, 'open'],
      [2, 'far too long'],
      [3, 'open'],
    ]);
    const error = (await engine.tick(new Date(t0 + 2000)).catch((e: unknown) => e)) as TriggerFireError;
    expect(error).toBeInstanceOf(TriggerFireError);
    expect(error.failures).toHaveLength(1);
    expect(error.failures[0]!.trigger).toBe('changes');
    expect((error.failures[0]!.error as Error).message).toMatch(
      /^the created row \{"id":2\}: .*row\.status: .*at most 6 characters/,
    );
    // The other row fired, in this tick.
    expect(error.fired).toHaveLength(1);
    // The next poll compares with what this one read: row 2 does not fail again; a new row fires.
    spreadsheets.setSheet('book', 'items', [
      ['id', 'status'],
      [1, 'open'],
      [2, 'far too long'],
      [3, 'open'],
      [4, 'new'],
    ]);
    const next = await engine.tick(new Date(t0 + 4000));
    expect(next).toHaveLength(1);
    await settle(engine);
    expect((seen as { row: { id: number } }[]).map((input) => input.row.id).sort()).toEqual([3, 4]);
  });
});
