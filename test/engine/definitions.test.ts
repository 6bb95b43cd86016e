import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  ValidationError,
  l2,
  workflow,
  type EntityBody,
} from '../../src/index.js';

const orders: EntityBody = {
  name: 'orders',
  columns: [{ name: 'id', type: 'NUMBER' }],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'shop', sheet_name: 'orders', origin: { row: 0, col: 0 } },
};
const engine = () =>
  new Engine({ spreadsheets: new MemorySpreadsheets({ shop: { orders: [['id'], [1]] } }) });

describe('typed definitions are still validated at run time', () => {
  it('refuses what a caller without types sends, naming the field', async () => {
    const wrong = { ...orders, columns: [{ name: 'id', type: 'TEXT' }] } as any;
    for (const call of [
      (e: Engine) => e.catalog.registerEntity(wrong),
      (e: Engine) => e.catalog.createEntity(wrong),
      (e: Engine) => e.catalog.upsertEntity(wrong),
      (e: Engine) => e.catalog.putEntity(wrong),
    ]) {
      const error = await call(engine()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues.map((i) => i.path)).toEqual(['columns[0].type']);
    }
    const steps = [{ name: 's', type: 'lambda' }];
    for (const call of [
      (e: Engine) => e.workflows.create({ name: 'w', steps, wires: [] } as any),
      (e: Engine) => e.workflows.put({ name: 'w', steps, wires: [] } as any),
    ])
      await expect(call(engine())).rejects.toBeInstanceOf(ValidationError);
  });
});

describe('one verb per act', () => {
  it('createEntity is registerEntity: a taken name is a conflict', async () => {
    const e = engine();
    await expect(e.catalog.createEntity(orders)).resolves.toEqual(orders);
    await expect(e.catalog.registerEntity(orders)).rejects.toMatchObject({ code: 'conflict' });
    await expect(e.catalog.createEntity(orders)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('putEntity and workflows.put create, then replace, saying which', async () => {
    const e = engine();
    expect(await e.catalog.putEntity(orders)).toEqual({ entity: orders, created: true });
    expect((await e.catalog.putEntity({ ...orders, description: 'Orders' })).created).toBe(false);
    expect((await e.catalog.upsertEntity(orders)).created).toBe(false);
    const definition = workflow('w')
      .step('s', l2('platform', 'dummy', 'dummy_task'))
      .build();
    expect((await e.workflows.put(definition)).created).toBe(true);
    expect((await e.workflows.put({ ...definition, description: 'again' })).created).toBe(false);
    expect((await e.workflows.get('w')).description).toBe('again');
  });
});

describe('engine.run', () => {
  it('runs the stored workflow a definition names', async () => {
    const e = engine();
    const definition = workflow('w')
      .input({ schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } })
      .step('s', l2('platform', 'dummy', 'dummy_task', { n: '{{input.n}}' }))
      .build();
    await e.workflows.create(definition);
    const record = await e.run(definition, { n: 2 });
    expect(record).toMatchObject({ workflow: 'w', status: 'succeeded', input: { n: 2 } });
    expect((await (await e.start(definition, { n: 3 })).result).input).toEqual({ n: 3 });
  });

  it('refuses an object without a name as it refuses any other value that is no name', async () => {
    await expect(engine().run({ nom: 'w' } as any)).rejects.toThrow(
      new TypeError('engine.run: the workflow name must be a string, got an object'),
    );
  });
});
