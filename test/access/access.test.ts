// Access control in the engine (DESIGN 17) on the in-memory adapters: the policy, engine.as(p),
// row and column rules on every read and write path, runs acting as their initiator.
import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  isForbiddenError,
  type GetEntityOutput,
  type Principal,
} from '../../src/index.js';
import {
  alice,
  bob,
  customers,
  CUSTOMER_ROWS,
  finance,
  manager,
  outsider,
  policy,
} from './policy-example.js';

async function openEngine(options: { access?: boolean } = {}) {
  const sheets = new MemorySpreadsheets({ crm: { customers: CUSTOMER_ROWS.map((r) => [...r]) } });
  const engine = new Engine({
    spreadsheets: sheets,
    ...(options.access === false ? {} : { access: policy }),
  });
  await engine.catalog.registerEntity(customers);
  return { engine, sheets };
}

function rowsOf(output: GetEntityOutput): Record<string, unknown>[] {
  expect(output.body.error?.errors).toEqual([]);
  const { columns, rows } = output.body.table;
  return (rows ?? []).map((row) => Object.fromEntries((columns ?? []).map((c, i) => [c.name, row[i]])));
}

const readAll = { entity_name: 'customers', operation: {} };

describe('the access policy', () => {
  it('is refused when it names an unknown entity, column, role or permission, each at its path', async () => {
    const { engine } = await openEngine({ access: false });
    const bad = {
      roles: { sales: { grants: ['entity.read:customers', 'entity.raed'] } },
      rows: [
        {
          entity: 'customer',
          roles: ['sales'],
          filters: [{ column: 'owner', operator: 'EQUALS', value: 1 }],
        },
        {
          entity: 'customers',
          roles: ['sale'],
          filters: [{ column: 'ownr', operator: 'EQUALS', value: '{{user.mail}}' }],
        },
      ],
      columns: [{ entity: 'customers', roles: ['sales'], hidden: ['credit'] }],
    };
    const error = await engine.access.put(bad as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'validation_failed' });
    const paths = (error as { issues: { path: string }[] }).issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(['roles.sales.grants[1]', 'rows[1].roles[0]', 'rows[1].filters[0].value']),
    );
    // The shape is right now: the catalog checks name the entity and the columns.
    const shaped = {
      roles: { sales: { grants: ['entity.read:customers'] } },
      rows: [
        {
          entity: 'customer',
          roles: ['sales'],
          filters: [{ column: 'owner', operator: 'EQUALS', value: 1 }],
        },
        {
          entity: 'customers',
          roles: ['sales'],
          filters: [{ column: 'ownr', operator: 'EQUALS', value: '{{user.email}}' }],
        },
      ],
      columns: [{ entity: 'customers', roles: ['sales'], hidden: ['credit'] }],
    };
    const second = await engine.access.put(shaped as never).catch((e: unknown) => e);
    expect((second as { issues: { path: string; message: string }[] }).issues).toEqual([
      expect.objectContaining({
        path: 'rows[0].entity',
        message: expect.stringContaining('unknown entity "customer"'),
      }),
      expect.objectContaining({
        path: 'rows[1].filters[0].column',
        message: expect.stringContaining('unknown column "ownr"'),
      }),
      expect.objectContaining({
        path: 'columns[0].hidden[0]',
        message: expect.stringContaining('unknown column "credit"'),
      }),
    ]);
    // Nothing was stored: the engine still trusts every caller.
    expect(await engine.access.get()).toBeUndefined();
    expect(rowsOf(await engine.as(outsider).catalog.getEntity(readAll))).toHaveLength(4);
  });

  it('is stored by put, read back by get, and in force from the next call', async () => {
    const { engine } = await openEngine({ access: false });
    await engine.access.put(policy);
    expect(await engine.access.get()).toEqual(policy);
    expect(rowsOf(await engine.as(alice).catalog.getEntity(readAll)).map((r) => r.id)).toEqual([1, 3]);
  });
});

describe('without access', () => {
  it('engine.as(p) reads and writes exactly as the engine does', async () => {
    const { engine } = await openEngine({ access: false });
    const view = engine.as(outsider);
    expect(await view.catalog.getEntity(readAll)).toEqual(await engine.catalog.getEntity(readAll));
    await view.catalog.append('customers', [{ id: 9, name: 'N', owner: 'x', region: 'r', credit_limit: 1 }]);
    expect(rowsOf(await engine.catalog.getEntity(readAll))).toHaveLength(5);
  });
});

describe('reads under the rules', () => {
  it('a sales person sees her own customers, without credit_limit', async () => {
    const { engine } = await openEngine();
    const rows = rowsOf(await engine.as(alice).catalog.getEntity(readAll));
    expect(rows).toEqual([
      { id: 1, name: 'Acme', owner: 'alice@example.com', region: 'north' },
      { id: 3, name: 'Initech', owner: 'alice@example.com', region: 'south' },
    ]);
  });

  it('her filters, order and paging work inside her rows', async () => {
    const { engine } = await openEngine();
    const out = await engine.as(alice).catalog.getEntity({
      entity_name: 'customers',
      operation: {
        filters: [{ column: 'region', operator: 'EQUALS', value: 'south' }],
        order_by: [{ column: 'id', direction: 'DESC' }],
      },
    });
    expect(rowsOf(out).map((r) => r.id)).toEqual([3]);
    const page2 = await engine.as(alice).catalog.getEntity({ ...readAll, page_size: 1, page_number: 2 });
    expect(rowsOf(page2).map((r) => r.id)).toEqual([3]);
    // A keyed read of a row outside her rule finds nothing, as for a missing key.
    const other = await engine.as(alice).catalog.getEntity({
      entity_name: 'customers',
      operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 2 }] },
    });
    const missing = await engine.as(alice).catalog.getEntity({
      entity_name: 'customers',
      operation: { filters: [{ column: 'id', operator: 'EQUALS', value: 99 }] },
    });
    expect(other).toEqual(missing);
  });

  it('a manager sees every row, without credit_limit; finance sees credit_limit', async () => {
    const { engine } = await openEngine();
    const seen = rowsOf(await engine.as(manager).catalog.getEntity(readAll));
    expect(seen.map((r) => r.id)).toEqual([1, 2, 3, 4]);
    expect(seen.every((r) => !('credit_limit' in r))).toBe(true);
    const fin = rowsOf(await engine.as(finance).catalog.getEntity(readAll));
    expect(fin.map((r) => r.credit_limit)).toEqual([5000, 12000, 800, 30000]);
  });

  it('a role that shows a column, beside one that hides it, shows it', async () => {
    const { engine } = await openEngine();
    const both: Principal = { ...alice, roles: ['sales', 'finance'] };
    const rows = rowsOf(await engine.as(both).catalog.getEntity(readAll));
    // finance has no row rule: all rows; finance hides nothing: credit_limit is there.
    expect(rows.map((r) => [r.id, r.credit_limit])).toEqual([
      [1, 5000],
      [2, 12000],
      [3, 800],
      [4, 30000],
    ]);
  });

  it('a hidden column named in select, filters or order is forbidden, naming the column and nothing of its cells', async () => {
    const { engine } = await openEngine();
    for (const operation of [
      { select_columns: [{ column: 'credit_limit' }] },
      { filters: [{ column: 'credit_limit', operator: 'GREATER_THAN', value: 10000 }] },
      { order_by: [{ column: 'credit_limit', direction: 'DESC' }] },
    ]) {
      const error = await engine
        .as(alice)
        .catalog.getEntity({ entity_name: 'customers', operation } as never)
        .catch((e: unknown) => e);
      expect(isForbiddenError(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /column "credit_limit" of entity "customers" is hidden from you/,
      );
      expect((error as Error).message).not.toMatch(/5000|12000|30000|800/);
    }
  });

  it('a principal without entity.read is forbidden, the message naming the permission', async () => {
    const { engine } = await openEngine();
    const error = await engine
      .as(outsider)
      .catalog.getEntity(readAll)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'forbidden', permission: 'entity.read' });
    expect((error as Error).message).toContain('entity.read:customers');
    await expect(engine.as(outsider).catalog.getDefinition('customers')).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(engine.as(outsider).catalog.listEntities()).rejects.toMatchObject({ code: 'forbidden' });
    // One who may read some entity lists those only.
    expect((await engine.as(alice).catalog.listEntities()).map((e) => e.name)).toEqual(['customers']);
  });

  it('definitions show only the columns a principal sees', async () => {
    const { engine } = await openEngine();
    const def = await engine.as(alice).catalog.getDefinition('customers');
    expect(def.columns.map((c) => c.name)).toEqual(['id', 'name', 'owner', 'region']);
    expect((await engine.as(finance).catalog.getDefinition('customers')).columns).toHaveLength(5);
  });

  it('the plain engine is the service: it sees everything', async () => {
    const { engine } = await openEngine();
    expect(rowsOf(await engine.catalog.getEntity(readAll))).toHaveLength(4);
  });
});

describe('writes under the rules', () => {
  it('appends her own customer; a row for someone else is forbidden and nothing is written', async () => {
    const { engine, sheets } = await openEngine();
    const view = engine.as(alice).catalog;
    await view.append('customers', [{ id: 5, name: 'Hooli', owner: 'alice@example.com', region: 'west' }]);
    const before = JSON.stringify(
      await sheets.read([{ spreadsheet_id: 'crm', sheet_name: 'customers', row: 0, col: 0 }]),
    );
    const error = await view
      .append('customers', [
        { id: 6, name: 'Mine', owner: 'alice@example.com', region: 'west' },
        { id: 7, name: 'Theirs', owner: 'bob@example.com', region: 'west' },
      ])
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'forbidden' });
    expect((error as Error).message).toMatch(/row 2 of "customers" would not be a row you may write/);
    expect(
      JSON.stringify(await sheets.read([{ spreadsheet_id: 'crm', sheet_name: 'customers', row: 0, col: 0 }])),
    ).toBe(before);
  });

  it('updating or deleting a row she does not see is refused exactly as a missing key', async () => {
    const { engine } = await openEngine();
    const view = engine.as(alice).catalog;
    const unseen = await view.update('customers', [{ id: 2, name: 'Mine now' }]).catch((e: unknown) => e);
    const absent = await view.update('customers', [{ id: 2000, name: 'Mine now' }]).catch((e: unknown) => e);
    expect(unseen).toMatchObject({ code: 'write_conflict' });
    expect((unseen as Error).message.replace('2', 'N')).toBe((absent as Error).message.replace('2000', 'N'));
    const gone = await view.delete('customers', [{ id: 4 }]).catch((e: unknown) => e);
    expect(gone).toMatchObject({ code: 'write_conflict' });
    expect((gone as Error).message).toContain('which no row of "customers" holds');
    expect(rowsOf(await engine.catalog.getEntity(readAll)).map((r) => r.name)).toEqual([
      'Acme',
      'Globex',
      'Initech',
      'Umbrella',
    ]);
  });

  it('a row must stay hers after the write: handing it to bob is forbidden', async () => {
    const { engine } = await openEngine();
    const view = engine.as(alice).catalog;
    await expect(view.update('customers', [{ id: 1, owner: 'bob@example.com' }])).rejects.toMatchObject({
      code: 'forbidden',
    });
    await view.update('customers', [{ id: 1, name: 'Acme Ltd' }]);
    await view.delete('customers', [{ id: 3 }]);
    expect(rowsOf(await engine.catalog.getEntity(readAll)).map((r) => [r.id, r.name])).toEqual([
      [1, 'Acme Ltd'],
      [2, 'Globex'],
      [4, 'Umbrella'],
    ]);
  });

  it('a hidden column may not be written, by name; replace is refused under a rule', async () => {
    const { engine } = await openEngine();
    const view = engine.as(alice).catalog;
    const error = await view.update('customers', [{ id: 1, credit_limit: 1e9 }]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'forbidden' });
    expect((error as Error).message).toContain('column "credit_limit" is hidden from you');
    await expect(
      view.append('customers', [
        { id: 8, name: 'X', owner: 'alice@example.com', region: 'r', credit_limit: 1 },
      ]),
    ).rejects.toMatchObject({ code: 'forbidden' });
    await expect(
      view.write([
        {
          entity: 'customers',
          mode: 'replace',
          rows: [{ id: 1, name: 'a', owner: 'alice@example.com', region: 'r' }],
        },
      ]),
    ).rejects.toMatchObject({ code: 'forbidden' });
    expect(rowsOf(await engine.as(finance).catalog.getEntity(readAll)).map((r) => r.credit_limit)).toEqual([
      5000, 12000, 800, 30000,
    ]);
  });

  it('a principal without entity.write is forbidden before any row is read', async () => {
    const { engine } = await openEngine();
    await expect(engine.as(manager).catalog.append('customers', [{ id: 9 }])).rejects.toMatchObject({
      code: 'forbidden',
      permission: 'entity.write',
    });
  });
});

describe('runs act as their initiator', () => {
  const workflow = {
    name: 'my_customers',
    steps: [
      {
        name: 'read',
        type: 'l2',
        l2_data: {
          provider: 'catalog',
          module: 'action',
          action: 'get_entity',
          metadata: {},
          input_data: { entity_name: 'customers', operation: {} },
        },
      },
      {
        name: 'count',
        type: 'atlas',
        atlas_data: {
          action: 'transform',
          input_entities: ['customers'],
          output_entities: [{ name: 'customers', write_mode: 'upsert' }],
          input_data: { language: 'javascript', code_file: 'count.js' },
        },
      },
    ],
    wires: [],
    workflow_output: { name: 'out', output_data: { rows: '{{read.body.table.rows}}' } },
  };

  async function withWorkflow(extra: Record<string, unknown> = {}) {
    const opened = await openEngine();
    await opened.engine.scripts.put(
      'count.js',
      "const rows = getEntity('customers'); console.log(JSON.stringify(rows.map((r) => [r.id, r.credit_limit ?? null])));",
    );
    await opened.engine.workflows.create({ ...workflow, ...extra } as never);
    return opened;
  }

  it('a run started by alice records her as initiator, and its steps read only her rows', async () => {
    const { engine } = await withWorkflow();
    const record = await engine.as(alice).run('my_customers', {});
    expect(record.error).toBeNull();
    expect(record.status).toBe('succeeded');
    expect(record.initiator).toEqual({
      id: 'u-alice',
      kind: 'user',
      roles: ['sales'],
      email: 'alice@example.com',
    });
    const rows = (record.output as { rows: unknown[][] }).rows;
    expect(rows.map((r) => r[0])).toEqual([1, 3]);
    expect(rows[0]).toHaveLength(4);
    expect(record.steps[1]!.logs).toEqual(['[[1,null],[3,null]]']);
  });

  it('a workflow with run_as "service" reads as the service', async () => {
    const { engine } = await withWorkflow({ run_as: 'service' });
    const record = await engine.as(alice).run('my_customers', {});
    expect((record.output as { rows: unknown[][] }).rows).toHaveLength(4);
    expect(record.initiator?.id).toBe('u-alice');
  });

  it('running needs workflow.run; reading runs needs runs.read or runs.read_own', async () => {
    const { engine } = await withWorkflow();
    await expect(engine.as(finance).run('my_customers', {})).rejects.toMatchObject({
      code: 'forbidden',
      permission: 'workflow.run',
    });
    const mine = await engine.as(alice).run('my_customers', {});
    const theirs = await engine.as(bob).run('my_customers', {});
    expect((await engine.as(alice).getRun(mine.id)).id).toBe(mine.id);
    await expect(engine.as(alice).getRun(theirs.id)).rejects.toMatchObject({ code: 'not_found' });
    expect((await engine.as(alice).listRuns()).runs.map((r) => r.id)).toEqual([mine.id]);
    expect((await engine.as(manager).listRuns()).runs.map((r) => r.id).sort()).toEqual(
      [mine.id, theirs.id].sort(),
    );
    await expect(engine.as(finance).getRun(mine.id)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(engine.as(alice).cancel(mine.id)).rejects.toMatchObject({
      code: 'forbidden',
      permission: 'runs.cancel',
    });
  });
});

describe('definitions and the audit log', () => {
  it('definitions need definitions.write; every change and refusal is an audit entry', async () => {
    const { engine } = await openEngine();
    await expect(engine.as(alice).scripts.put('x.js', 'log(1)')).rejects.toMatchObject({
      code: 'forbidden',
      permission: 'definitions.write',
    });
    const admin: Principal = { id: 'u-admin', kind: 'user', roles: ['admin'] };
    await engine.as(admin).scripts.put('x.js', 'log(1)');
    await engine.as(alice).catalog.update('customers', [{ id: 1, name: 'Acme Two' }]);
    const { entries } = await engine.as(admin).audit.list();
    expect(entries.map((e) => [e.principal.id, e.action, e.resource, e.outcome])).toEqual([
      ['u-alice', 'definition.put', 'script:x.js', 'denied'],
      ['u-admin', 'definition.put', 'script:x.js', 'success'],
      ['u-alice', 'rows.write', 'entity:customers', 'success'],
    ]);
    expect(entries[2]!.detail).toEqual({ mode: 'update', rows: 1, keys: [{ id: 1 }] });
    expect(JSON.stringify(entries)).not.toContain('Acme Two');
    await expect(engine.as(alice).audit.list()).rejects.toMatchObject({
      code: 'forbidden',
      permission: 'audit.read',
    });
  });
});

describe('keys and users through engine.as(p)', () => {
  it('need keys.manage and users.manage; the audit log names them and holds no secret or password', async () => {
    const { engine } = await openEngine();
    const admin: Principal = { id: 'u-admin', kind: 'user', roles: ['admin'] };
    await expect(engine.as(alice).keys.create({ name: 'mine', roles: ['admin'] })).rejects.toMatchObject({
      code: 'forbidden',
      permission: 'keys.manage',
    });
    await expect(engine.as(alice).users.list()).rejects.toMatchObject({ permission: 'users.manage' });
    const key = await engine.as(admin).keys.create({ name: 'export', roles: ['finance'] });
    const user = await engine.as(admin).users.create({
      email: 'new@example.com',
      roles: ['sales'],
      password: 'a long enough password',
    });
    await engine.as(admin).users.disable(user.id);
    const { entries } = await engine.audit.list();
    expect(entries.map((e) => [e.principal.id, e.action, e.outcome])).toEqual([
      ['u-alice', 'key.create', 'denied'],
      ['u-admin', 'key.create', 'success'],
      ['u-admin', 'user.create', 'success'],
      ['u-admin', 'user.disable', 'success'],
    ]);
    const text = JSON.stringify(entries);
    expect(text).not.toContain(key.secret);
    expect(text).not.toContain('a long enough password');
    expect((await engine.as(admin).keys.list()).map((k) => k.name)).toEqual(['export']);
  });
});
