import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  ValidationError,
  WriteRejectedError,
  type Entity,
} from '../../src/index.js';

const people: Entity = {
  name: 'people',
  columns: [
    { name: 'id', type: 'NUMBER' },
    { name: 'name', type: 'STRING', required: true, min_length: 2, max_length: 10 },
    { name: 'code', type: 'STRING', pattern: '^[A-Z]{3}-\\d+$' },
    { name: 'email', type: 'STRING', format: 'email' },
    { name: 'site', type: 'STRING', format: 'url' },
    { name: 'status', type: 'STRING', enum: ['new', 'done'] },
    { name: 'start', type: 'NUMBER' },
    { name: 'stop', type: 'NUMBER' },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 's', sheet_name: 'people', origin: { row: 0, col: 0 } },
  checks: [{ expression: 'stop >= start', message: 'stop comes before start' }],
};

async function engine() {
  const sheets = new MemorySpreadsheets({
    s: {
      people: [
        ['id', 'name', 'code', 'email', 'site', 'status', 'start', 'stop'],
        [1, 'Ada', null, null, null, 'new', 1, 2],
      ],
    },
  });
  const made = new Engine({ spreadsheets: sheets });
  await made.catalog.registerEntity(people);
  return { engine: made, sheets };
}

const good = {
  id: 2,
  name: 'Grace',
  code: 'ABC-12',
  email: 'g@x.org',
  site: 'https://x.org',
  status: 'done',
  start: 1,
  stop: 1,
};

describe('validation rules', () => {
  it('accepts rows that keep every rule', async () => {
    const { engine: e } = await engine();
    await expect(e.catalog.append('people', [good])).resolves.toEqual({ written: 1 });
  });

  it('refuses a write whole, naming every broken rule with its row and column', async () => {
    const { engine: e, sheets } = await engine();
    const before = JSON.stringify(
      await sheets.read([{ spreadsheet_id: 's', sheet_name: 'people', row: 0, col: 0 }]),
    );
    const error = (await e.catalog
      .append('people', [
        good,
        {
          ...good,
          id: 3,
          name: null,
          code: 'abc',
          email: 'nope',
          site: 'ftp://x',
          status: 'later',
          start: 5,
          stop: 4,
        },
        { ...good, id: 4, name: 'A very long name' },
      ])
      .catch((x: unknown) => x)) as WriteRejectedError;
    expect(error).toBeInstanceOf(WriteRejectedError);
    expect(error.issues.map((i) => i.path)).toEqual([
      'people[1].name',
      'people[1].code',
      'people[1].email',
      'people[1].site',
      'people[1].status',
      'people[1]',
      'people[2].name',
    ]);
    const messages = error.issues.map((i) => i.message).join('\n');
    expect(messages).toContain('row 2 of "people": column "name" is required');
    expect(messages).toContain('must match pattern');
    expect(messages).toContain('must be an email address');
    expect(messages).toContain('must be an http or https URL');
    expect(messages).toContain('must be one of "new", "done", got "later"');
    expect(messages).toContain('breaks a check on columns "start", "stop": stop comes before start');
    expect(messages).toContain('must be at most 10 characters long, got 16');
    const after = JSON.stringify(
      await sheets.read([{ spreadsheet_id: 's', sheet_name: 'people', row: 0, col: 0 }]),
    );
    expect(after).toBe(before);
  });

  it('checks updates on the columns they give, and checks on the row after the update', async () => {
    const { engine: e } = await engine();
    await expect(e.catalog.update('people', [{ id: 1, status: 'done' }])).resolves.toEqual({ written: 1 });
    const error = (await e.catalog
      .update('people', [{ id: 1, start: 9 }])
      .catch((x: unknown) => x)) as WriteRejectedError;
    expect(error.issues).toEqual([expect.objectContaining({ code: 'check_failed', path: 'people[0]' })]);
    await expect(e.catalog.upsert('people', [{ id: 1, name: 'X' }])).rejects.toThrow(/at least 2 characters/);
  });

  it('runs patterns in linear time: a hostile pattern on a long text answers at once', async () => {
    const sheets = new MemorySpreadsheets({ s: { t: [['id', 'v']] } });
    const e = new Engine({ spreadsheets: sheets });
    await e.catalog.registerEntity({
      name: 't',
      columns: [
        { name: 'id', type: 'NUMBER' },
        { name: 'v', type: 'STRING', pattern: '^(a+)+$' },
      ],
      primary_key: ['id'],
      spreadsheet_config: { spreadsheet_id: 's', sheet_name: 't', origin: { row: 0, col: 0 } },
    });
    const started = performance.now();
    await expect(e.catalog.append('t', [{ id: 1, v: 'a'.repeat(40_000) + 'b' }])).rejects.toThrow(
      /must match pattern/,
    );
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses rules that do not fit their column when the entity is registered', async () => {
    const e = new Engine();
    const error = (await e.catalog
      .registerEntity({
        ...people,
        columns: [
          { name: 'id', type: 'NUMBER', min_length: 1 },
          { name: 'name', type: 'STRING', min_length: 5, max_length: 2, pattern: '(?<=a)b' },
          { name: 'n', type: 'NUMBER', enum: ['x'] },
        ],
        checks: [{ expression: 'name + 1', message: 'm' }],
      })
      .catch((x: unknown) => x)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues.map((i) => i.path)).toEqual([
      'columns[0].min_length',
      'columns[1].min_length',
      'columns[1].pattern',
      'columns[2].enum[0]',
      'checks[0].expression',
    ]);
  });
});
