import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import {
  Engine,
  MemorySpreadsheets,
  MemoryStorage,
  type StorageAdapter,
  type Workflow,
} from '../../src/index.js';
import { createHandler } from '../../src/http/index.js';
import { DefinitionHistory } from '../../src/adapters/definition-history.js';
import { customersEntity, ordersEntity, shopSheets } from '../fixtures.js';
import { reachServer, testSchemas } from '../postgres/server.js';

const url = await reachServer();
const schemas = testSchemas(url);
let pglite: PGlite | undefined;
afterAll(async () => {
  await schemas.drop();
  await pglite?.close();
});

/** A one-step workflow whose step greets with `greeting`. */
function hello(greeting: string, name = 'hello'): Workflow {
  return {
    name,
    steps: [
      {
        name: 'say',
        type: 'l2',
        l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { greeting } },
      },
    ],
    wires: [],
  };
}

const storages: { name: string; open: () => Promise<{ storage: StorageAdapter; close(): Promise<void> }> }[] =
  [
    { name: 'memory', open: async () => ({ storage: new MemoryStorage(), close: async () => undefined }) },
    {
      // The PostgreSQL server when it answers, else PGlite in memory: the same SQL either way.
      name: url ? 'PostgreSQL' : 'PostgreSQL on PGlite',
      open: async () => {
        const db = url
          ? await openPostgres(url, { schema: schemas.next() })
          : await openPostgres({ pglite: (pglite ??= await PGlite.create()) }, { schema: schemas.next() });
        return { storage: db.storage, close: () => db.close() };
      },
    },
  ];

describe.each(storages)('definition history on $name', ({ open }) => {
  async function withEngine(work: (engine: Engine, storage: StorageAdapter) => Promise<void>) {
    const { storage, close } = await open();
    const engine = new Engine({ storage, spreadsheets: new MemorySpreadsheets(shopSheets()) });
    try {
      await work(engine, storage);
    } finally {
      await engine.close();
      await close();
    }
  }

  it('keeps every version of a workflow: create, replace, delete, create again', () =>
    withEngine(async (engine) => {
      await engine.workflows.create(hello('one'));
      await engine.workflows.put(hello('two'));
      await engine.workflows.delete('hello', { by: { id: 'ann', kind: 'user' } });
      await engine.workflows.create(hello('three'));
      const { versions, next } = await engine.workflows.versions('hello');
      expect(next).toBeUndefined();
      expect(versions.map((v) => [v.version, v.action])).toEqual([
        [1, 'create'],
        [2, 'replace'],
        [3, 'delete'],
        [4, 'create'],
      ]);
      expect(versions[0]!.definition).toEqual((await engine.workflows.validate(hello('one'))) as unknown);
      expect(versions[1]!.definition).toMatchObject({
        steps: [{ l2_data: { input_data: { greeting: 'two' } } }],
      });
      expect(versions[2]!.definition).toBeNull();
      expect(versions[2]!.by).toEqual({ id: 'ann', kind: 'user' });
      expect(versions[0]!.by).toBeUndefined();
      expect(Date.parse(versions[0]!.at)).not.toBeNaN();
    }));

  it('lists versions a page at a time', () =>
    withEngine(async (engine) => {
      for (let i = 1; i <= 5; i++) await engine.workflows.put(hello(`v${i}`));
      const first = await engine.workflows.versions('hello', { limit: 2 });
      expect(first.versions.map((v) => v.version)).toEqual([1, 2]);
      expect(first.next).toBe(2);
      const second = await engine.workflows.versions('hello', { after: first.next!, limit: 2 });
      expect(second.versions.map((v) => v.version)).toEqual([3, 4]);
      const last = await engine.workflows.versions('hello', { after: second.next!, limit: 2 });
      expect(last).toEqual({ versions: [expect.objectContaining({ version: 5 })] });
      await expect(engine.workflows.versions('hello', { limit: 0 })).rejects.toMatchObject({
        name: 'ValidationError',
      });
      await expect(engine.workflows.versions('never')).rejects.toMatchObject({ name: 'NotFoundError' });
    }));

  it('adds no version for a definition that fails validation or a name taken', () =>
    withEngine(async (engine) => {
      await engine.workflows.create(hello('one'));
      const unknownAction = hello('x');
      Object.assign(unknownAction.steps[0]!, {
        l2_data: { provider: 'no', module: 'no', action: 'no', input_data: {} },
      });
      await expect(engine.workflows.put(unknownAction)).rejects.toMatchObject({ name: 'ValidationError' });
      await expect(engine.workflows.create(hello('again'))).rejects.toMatchObject({ name: 'ConflictError' });
      await expect(engine.scripts.put('bad name/', 'x')).rejects.toThrow();
      await expect(
        engine.catalog.registerEntity({ ...customersEntity, columns: [] } as never),
      ).rejects.toThrow();
      expect((await engine.workflows.versions('hello')).versions).toHaveLength(1);
      await expect(engine.catalog.entityVersions(customersEntity.name)).rejects.toMatchObject({
        name: 'NotFoundError',
      });
    }));

  it('keeps versions of entities, relationships, scripts, applications, triggers and the access policy', () =>
    withEngine(async (engine, storage) => {
      await engine.catalog.registerEntity(customersEntity);
      await engine.catalog.putEntity({ ...customersEntity, description: 'people' });
      await engine.catalog.registerEntity(ordersEntity);
      await engine.catalog.createRelationship({
        name: 'orders_customers',
        relationship_type: 'foreign_key',
        source_entity: ordersEntity.name,
        target_entity: customersEntity.name,
        foreign_key_config: {
          source_columns: ['customer_id'],
          target_columns: ['id'],
          enforce_foreign_key: false,
        },
      });
      const entity = await engine.catalog.entityVersions(customersEntity.name);
      expect(entity.versions.map((v) => v.action)).toEqual(['create', 'replace']);
      expect(entity.versions[1]!.definition).toMatchObject({ description: 'people' });

      await engine.scripts.put('t.js', 'a', { by: { id: 'k1', kind: 'key' } });
      await engine.scripts.put('t.js', 'b');
      await engine.scripts.delete('t.js');
      const script = await engine.scripts.versions('t.js');
      expect(script.versions.map((v) => [v.action, v.definition])).toEqual([
        ['create', { name: 't.js', source: 'a' }],
        ['replace', { name: 't.js', source: 'b' }],
        ['delete', null],
      ]);
      expect(script.versions[0]!.by).toEqual({ id: 'k1', kind: 'key' });

      await engine.workflows.create(hello('hi'));
      const app = {
        start_screen_url: 'home',
        screens: [
          { url: 'home', components: [[{ name: 't', type: 'text' as const, text: { contents: 'x' } }]] },
        ],
      };
      await engine.applications.put('shop', app);
      await engine.applications.delete('shop');
      expect((await engine.applications.versions('shop')).versions.map((v) => v.action)).toEqual([
        'create',
        'delete',
      ]);

      const trigger = await engine.triggers.create({
        name: 'hook',
        type: 'webhook',
        workflow_name: 'hello',
        webhook_data: { secret: 'a secret of sixteen+' },
      });
      await engine.triggers.delete('hook');
      const triggers = await engine.triggers.versions('hook');
      expect(triggers.versions.map((v) => [v.action, v.definition])).toEqual([
        ['create', trigger],
        ['delete', null],
      ]);

      await engine.access.put({ roles: { admin: { grants: ['*'] } } });
      await engine.access.put({
        roles: { admin: { grants: ['*'] }, viewer: { grants: ['definitions.read'] } },
      });
      const history = new DefinitionHistory(storage);
      expect((await history.list('access', 'policy')).versions.map((v) => v.action)).toEqual([
        'create',
        'replace',
      ]);
      expect((await history.list('relationship', 'orders_customers')).versions).toHaveLength(1);
      // Keys sort by kind, name and version.
      const keys = (await storage.list('definition_versions')).map((e) => e.key);
      expect(keys).toContain('workflow/hello/0000000001');
      expect([...keys].sort()).toEqual(keys);
    }));

  it('names the version a run ran in its record, also after a replace between two runs', () =>
    withEngine(async (engine) => {
      await engine.workflows.create(hello('one'));
      expect((await engine.run('hello', {})).workflow_version).toBe(1);
      await engine.workflows.put(hello('two'));
      const second = await engine.run('hello', {});
      expect(second.workflow_version).toBe(2);
      expect((await engine.getRun(second.id)).workflow_version).toBe(2);
      // Another engine on the same storage finds the version by the stored definition.
      const other = new Engine({ storage: (engine.options as { storage: StorageAdapter }).storage });
      try {
        expect((await other.run('hello', {})).workflow_version).toBe(2);
      } finally {
        await other.close();
      }
    }));

  it('leaves workflow_version out for a workflow stored before history', () =>
    withEngine(async (engine, storage) => {
      await storage.put('workflows', 'old', hello('old', 'old'));
      const record = await engine.run('old', {});
      expect(record.status).toBe('succeeded');
      expect(record).not.toHaveProperty('workflow_version');
      expect(await engine.workflows.versions('old')).toEqual({ versions: [] });
    }));
});

describe('durable runs name their version', () => {
  it('keeps workflow_version on a run of the queue from start to end', async () => {
    const db = await openPostgres({ pglite: (pglite ??= await PGlite.create()) }, { schema: schemas.next() });
    const engine = new Engine({ storage: db.storage, queue: db.queue });
    const worker = engine.work({ triggers: false });
    try {
      await engine.workflows.create(hello('one'));
      await engine.workflows.put(hello('two'));
      const handle = await engine.start('hello', {});
      const record = await handle.result;
      expect(record.status).toBe('succeeded');
      expect(record.workflow_version).toBe(2);
      expect((await engine.getRun(record.id)).workflow_version).toBe(2);
    } finally {
      await worker.stop();
      await engine.close();
      await db.close();
    }
  }, 30_000);
});

describe('the versions routes', () => {
  it('list versions of each kind, and answer 404 for a name that never existed', async () => {
    const engine = new Engine({ spreadsheets: new MemorySpreadsheets(shopSheets()) });
    const handler = createHandler(engine);
    const get = async (path: string) => {
      const response = await handler(new Request(`http://localhost${path}`));
      return { status: response.status, body: (await response.json()) as any };
    };
    await engine.catalog.registerEntity(customersEntity);
    await engine.workflows.create(hello('one'));
    await engine.workflows.put(hello('two'));
    await engine.scripts.put('t.js', 'a');
    const workflows = await get('/workflows/hello/versions?limit=1');
    expect(workflows.status).toBe(200);
    expect(workflows.body.versions.map((v: any) => v.version)).toEqual([1]);
    expect(workflows.body.next).toBe(1);
    expect((await get('/workflows/hello/versions?after=1')).body.versions[0].action).toBe('replace');
    expect((await get('/scripts/t.js/versions')).body.versions).toHaveLength(1);
    expect((await get(`/catalog/entities/${customersEntity.name}/versions`)).body.versions).toHaveLength(1);
    for (const path of [
      '/workflows/none/versions',
      '/scripts/none/versions',
      '/applications/none/versions',
      '/triggers/none/versions',
      '/catalog/entities/none/versions',
    ])
      expect((await get(path)).status, path).toBe(404);
    expect((await get('/workflows/hello/versions?limit=0')).status).toBe(400);
    expect((await get('/workflows/hello/versions?after=x')).status).toBe(400);
    await engine.close();
  });
});
