import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  ValidationError,
  type EntityBody,
  type WorkflowBody,
} from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { RESOURCE_NAME_RULE, isResourceName } from '../../src/schema/index.js';
import { call } from '../http/helpers.js';

const HOSTILE = [
  '..',
  '.',
  '../x',
  'a/b',
  'a\\b',
  'a\u0000b',
  'tab\there',
  'line\nbreak',
  '.hidden',
  ' lead',
  'trail ',
  'a..b',
  'x'.repeat(129),
  '',
];
const FINE = ['orders', 'summarize.js', 'Orders 2024', 'crème-brûlée_v1.2', '_private', '42'];

const entity = (name: string): EntityBody => ({
  name,
  columns: [{ name: 'id', type: 'NUMBER' }],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 's', sheet_name: 't', origin: { row: 0, col: 0 } },
});
const workflow = (name: string): WorkflowBody => ({
  name,
  steps: [
    { name: 'a', type: 'l2', l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task' } },
  ],
  wires: [],
});

describe('the name rule of stored resources', () => {
  it('accepts ordinary names and refuses paths, dots, control characters and blanks', () => {
    for (const name of FINE) expect(isResourceName(name), name).toBe(true);
    for (const name of HOSTILE) expect(isResourceName(name), JSON.stringify(name)).toBe(false);
  });

  it('is enforced for every kind of stored resource through the engine', async () => {
    const engine = new Engine({ spreadsheets: new MemorySpreadsheets({ s: { t: [['id']] } }) });
    await engine.catalog.registerEntity(entity('target'));
    const attempts: [string, () => Promise<unknown>][] = [
      ['script', () => engine.scripts.put('../evil', 'x')],
      ['entity', () => engine.catalog.registerEntity(entity('a/b'))],
      ['entity upsert', () => engine.catalog.upsertEntity(entity('..'))],
      [
        'relationship',
        () =>
          engine.catalog.createRelationship({
            name: 'r\u0000',
            relationship_type: 'foreign_key',
            source_entity: 'target',
            target_entity: 'target',
            foreign_key_config: {
              source_columns: ['id'],
              target_columns: ['id'],
              enforce_foreign_key: false,
            },
          }),
      ],
      ['workflow', () => engine.workflows.create(workflow('w/../x'))],
      // The name is refused before the config is read.
      ['application', () => engine.applications.put('app\n', { name: 'x' } as never)],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(ValidationError);
      const issue = (error as ValidationError).issues.find((i) => i.code === 'invalid_name');
      expect(issue, what).toMatchObject({ path: 'name' });
      expect(issue!.message).toContain(RESOURCE_NAME_RULE);
    }
    expect(await engine.scripts.list()).toEqual([]);
    expect((await engine.workflows.list()).map((w) => w.name)).toEqual([]);
  });

  it('answers 400 naming the rule over HTTP, and stores nothing', async () => {
    const engine = new Engine();
    const handler = createHandler(engine);
    const put = await call(handler, 'PUT', '/scripts/..%2F..%2Fpackage.json', 'x', {
      'content-type': 'text/plain',
    });
    expect(put.status).toBe(400);
    expect(put.body.errors[0]).toMatchObject({ code: 'invalid_name', path: 'name' });
    expect(put.body.detail).toContain(RESOURCE_NAME_RULE);
    const created = await call(handler, 'POST', '/workflows', workflow('a\u0001b'));
    expect(created.status).toBe(400);
    expect(created.body.errors[0]).toMatchObject({ code: 'invalid_name', path: 'name' });
    expect(await engine.scripts.list()).toEqual([]);
    const fine = await call(handler, 'PUT', '/scripts/summarize.js', 'writeEntity("x", [])', {
      'content-type': 'text/plain',
    });
    expect(fine.status).toBe(201);
  });
});
