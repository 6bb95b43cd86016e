/**
 * The access oracle (DESIGN 17): random rows, a random policy (roles with and without row rules on
 * `{{user.id}}`, `{{user.email}}`, `{{user.roles}}` and comparisons; roles without `entity.read`;
 * column rules that hide or keep read-only), random principals, reads and writes. What
 * `engine.as(p).catalog` reads must equal the plain read of the allowed rows (worked out here by
 * evaluating the rules in plain JS, then read by a second engine over only those rows) without the
 * hidden columns; its writes must end as the model says: unseen rows untouched, a refused write
 * leaving every cell as it was, an unseen row refused exactly as a missing one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Engine,
  MemorySpreadsheets,
  type AccessPolicy,
  type CellValue,
  type GetEntityInput,
  type Principal,
} from '../../src/index.js';

const COLUMNS = ['id', 'owner', 'email', 'region', 'amount', 'note'] as const;
type ColumnName = (typeof COLUMNS)[number];
type Row = {
  id: number;
  owner: string | null;
  email: string | null;
  region: string | null;
  amount: number | null;
  note: string | null;
};

const entity = {
  name: 'items',
  columns: [
    { name: 'id', type: 'NUMBER' as const },
    { name: 'owner', type: 'STRING' as const },
    { name: 'email', type: 'STRING' as const },
    { name: 'region', type: 'STRING' as const },
    { name: 'amount', type: 'NUMBER' as const },
    { name: 'note', type: 'STRING' as const },
  ],
  primary_key: ['id'],
  spreadsheet_config: { spreadsheet_id: 'book', sheet_name: 'items', origin: { row: 0, col: 0 } },
};

/** Role names double as regions, so `region IN {{user.roles}}` means something. */
const ROLES = ['north', 'south', 'east', 'hq'] as const;
const IDS = ['u1', 'u2', 'u3'] as const;
const EMAILS = ['a@x.io', 'b@x.io', 'c@x.io'] as const;
const HIDEABLE: ColumnName[] = ['email', 'amount', 'note'];

const owner = fc.option(fc.constantFrom(...IDS), { nil: null, freq: 5 });
const email = fc.option(fc.constantFrom(...EMAILS), { nil: null, freq: 5 });
const region = fc.option(fc.constantFrom('north', 'south', 'east', 'west'), { nil: null, freq: 5 });
const amount = fc.option(fc.integer({ min: -5, max: 20 }), { nil: null, freq: 5 });
const note = fc.option(fc.constantFrom('x', 'two words', '', 'north'), { nil: null, freq: 4 });
const values = { owner, email, region, amount, note };

const rowsArb = fc
  .array(fc.record(values), { minLength: 0, maxLength: 12 })
  .map((rows): Row[] => rows.map((r, i) => ({ id: i + 1, ...r, note: r.note === '' ? null : r.note })));

type Operator = NonNullable<AccessPolicy['rows']>[number]['filters'][number]['operator'];
type RuleFilter = { column: ColumnName; operator: Operator; value: unknown };
const ruleFilter: fc.Arbitrary<RuleFilter> = fc.oneof(
  fc.constant({ column: 'owner' as const, operator: 'EQUALS' as const, value: '{{user.id}}' }),
  fc.constant({ column: 'email' as const, operator: 'EQUALS' as const, value: '{{user.email}}' }),
  fc.constant({ column: 'region' as const, operator: 'IN' as const, value: '{{user.roles}}' }),
  fc.record({
    column: fc.constant('amount' as const),
    operator: fc.constantFrom('GREATER_THAN', 'LESS_THAN_OR_EQUALS', 'GREATER_THAN_OR_EQUALS', 'NOT_EQUALS'),
    value: fc.integer({ min: -2, max: 15 }),
  }),
  fc.record({
    column: fc.constant('region' as const),
    operator: fc.constant('EQUALS' as const),
    value: fc.constantFrom('north', 'east'),
  }),
);

const GRANTS: string[][] = [
  [],
  ['entity.read:items'],
  ['entity.read'],
  ['entity.read:items', 'entity.write:items'],
  ['entity.read:*', 'entity.write'],
  ['entity.write:items'],
  ['entity.read:other'],
  ['*'],
];

const policyArb: fc.Arbitrary<AccessPolicy> = fc
  .record({
    grants: fc.tuple(...ROLES.map(() => fc.constantFrom(...GRANTS))),
    rows: fc.array(
      fc.record({
        roles: fc.subarray([...ROLES], { minLength: 1 }),
        filters: fc.array(ruleFilter, { minLength: 1, maxLength: 2 }),
      }),
      { maxLength: 4 },
    ),
    columns: fc.array(
      fc.record(
        {
          roles: fc.subarray([...ROLES], { minLength: 1 }),
          hidden: fc.subarray(HIDEABLE),
          read_only: fc.subarray(['owner', 'region', 'amount', 'note']),
        },
        { requiredKeys: ['roles'] },
      ),
      { maxLength: 3 },
    ),
  })
  .map(({ grants, rows, columns }) => ({
    roles: Object.fromEntries(ROLES.map((role, i) => [role, { grants: grants[i]! }])),
    rows: rows.map((rule) => ({ entity: 'items', ...rule })),
    columns: columns.map((rule) => ({ entity: 'items', ...rule })),
  }));

const principalArb: fc.Arbitrary<Principal> = fc
  .record(
    {
      id: fc.constantFrom(...IDS),
      email: fc.constantFrom(...EMAILS),
      roles: fc.subarray([...ROLES, 'ghost']),
    },
    { requiredKeys: ['id', 'roles'] },
  )
  .map((p) => ({ ...p, kind: 'user' as const }));

// ---- the model: the policy evaluated in plain JS ----

interface Seen {
  rules: 'all' | RuleFilter[][];
  hidden: Set<string>;
  readOnly: Set<string>;
}

function holds(grants: string[], permission: string): boolean {
  return grants.some(
    (g) => g === '*' || g === permission || g === `${permission}:*` || g === `${permission}:items`,
  );
}

/** What `p` may read or write of the entity, or `forbidden`. */
function accessOf(policy: AccessPolicy, p: Principal, mode: 'read' | 'write'): Seen | 'forbidden' {
  const permission = mode === 'read' ? 'entity.read' : 'entity.write';
  const roles = p.roles.filter((r) => policy.roles[r] && holds(policy.roles[r]!.grants, permission));
  if (roles.length === 0) return 'forbidden';
  const rowRules = policy.rows ?? [];
  const unruled = roles.some((role) => !rowRules.some((rule) => rule.roles.includes(role)));
  const user = (value: unknown): unknown =>
    value === '{{user.id}}'
      ? p.id
      : value === '{{user.email}}'
        ? (p.email ?? null)
        : value === '{{user.roles}}'
          ? p.roles
          : value;
  const rules = unruled
    ? ('all' as const)
    : rowRules
        .filter((rule) => rule.roles.some((r) => roles.includes(r)))
        .map((rule) => rule.filters.map((f) => ({ ...f, value: user(f.value) }) as RuleFilter));
  const common = (pick: 'hidden' | 'read_only') => {
    const each = roles.map(
      (role) =>
        new Set((policy.columns ?? []).filter((c) => c.roles.includes(role)).flatMap((c) => c[pick] ?? [])),
    );
    return new Set([...each[0]!].filter((c) => each.every((s) => s.has(c))));
  };
  return { rules, hidden: common('hidden'), readOnly: common('read_only') };
}

function matchesFilter(row: Row, f: RuleFilter): boolean {
  const v = row[f.column];
  const x = f.value;
  if (v === null) return false;
  switch (f.operator) {
    case 'EQUALS':
      return x !== null && v === x;
    case 'NOT_EQUALS':
      return x !== null && v !== x;
    case 'IN':
      return (x as unknown[]).includes(v);
    case 'GREATER_THAN':
      return (v as number) > (x as number);
    case 'GREATER_THAN_OR_EQUALS':
      return (v as number) >= (x as number);
    case 'LESS_THAN_OR_EQUALS':
      return (v as number) <= (x as number);
    default:
      throw new Error(`no model for ${f.operator}`);
  }
}

const sees = (rules: Seen['rules'], row: Row) =>
  rules === 'all' || rules.some((filters) => filters.every((f) => matchesFilter(row, f)));

const cellsOf = (rows: readonly Row[]): CellValue[][] => [
  [...COLUMNS],
  ...rows.map((r) => COLUMNS.map((c) => r[c])),
];

async function openEngine(rows: readonly Row[], access?: AccessPolicy) {
  const sheets = new MemorySpreadsheets({ book: { items: cellsOf(rows) } });
  const engine = new Engine({ spreadsheets: sheets, ...(access ? { access } : {}) });
  await engine.catalog.registerEntity(entity);
  return { engine, sheets };
}

// ---- reads ----

const readFilter = fc.oneof(
  fc.record({
    column: fc.constantFrom('owner', 'email', 'region', 'note'),
    operator: fc.constantFrom('EQUALS', 'NOT_EQUALS'),
    value: fc.constantFrom('u1', 'a@x.io', 'north', 'x'),
  }),
  fc.record({
    column: fc.constantFrom('id', 'amount'),
    operator: fc.constantFrom('EQUALS', 'GREATER_THAN', 'LESS_THAN', 'NOT_EQUALS'),
    value: fc.integer({ min: -3, max: 12 }),
  }),
  fc.record({ column: fc.constantFrom(...COLUMNS), operator: fc.constantFrom('IS_NULL', 'IS_NOT_NULL') }),
  fc.record({
    column: fc.constant('region'),
    operator: fc.constant('IN'),
    value: fc.subarray(['north', 'south', 'west']),
  }),
);

const readArb: fc.Arbitrary<GetEntityInput> = fc
  .record(
    {
      filters: fc.array(readFilter, { maxLength: 2 }),
      order_by: fc.array(
        fc.record({ column: fc.constantFrom(...COLUMNS), direction: fc.constantFrom('ASC', 'DESC') }),
        { maxLength: 2 },
      ),
      select_columns: fc
        .subarray([...COLUMNS], { minLength: 1 })
        .map((cs) => cs.map((column) => ({ column }))),
      page_size: fc.integer({ min: 1, max: 5 }),
      page_number: fc.integer({ min: 1, max: 4 }),
    },
    { requiredKeys: [] },
  )
  .map(({ page_size, page_number, ...operation }) => ({
    entity_name: 'items',
    operation,
    ...(page_size === undefined ? {} : { page_size }),
    ...(page_number === undefined ? {} : { page_number }),
  })) as fc.Arbitrary<GetEntityInput>;

/** Every column a read names (select, filters, order). */
function named(read: GetEntityInput): string[] {
  const op = read.operation ?? {};
  return [...(op.select_columns ?? []), ...(op.filters ?? []), ...(op.order_by ?? [])].map((x) => x.column);
}

/** A read's output without the columns in `hidden`. */
function withoutColumns(output: Awaited<ReturnType<Engine['catalog']['getEntity']>>, hidden: Set<string>) {
  const { columns, rows } = output.body.table;
  if (!columns || !rows) return output;
  const keep = columns.flatMap((c, i) => (hidden.has(c.name) ? [] : [i]));
  return {
    body: {
      ...output.body,
      table: { columns: keep.map((i) => columns[i]!), rows: rows.map((r) => keep.map((i) => r[i])) },
    },
  };
}

describe('engine.as(p) reads against the plain read of the allowed rows', () => {
  it('equals it, without hidden columns; forbidden without entity.read or naming a hidden column', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        policyArb,
        fc.array(fc.tuple(principalArb, readArb), { minLength: 1, maxLength: 4 }),
        async (rows, policy, reads) => {
          const { engine } = await openEngine(rows, policy);
          for (const [principal, read] of reads) {
            const access = accessOf(policy, principal, 'read');
            const got = await engine
              .as(principal)
              .catalog.getEntity(read)
              .then(
                (output) => ({ output }),
                (error: unknown) => ({ error: error as { code?: string; message: string } }),
              );
            const what = JSON.stringify({
              principal,
              read,
              access: access === 'forbidden' ? access : { ...access, hidden: [...access.hidden] },
            });
            if (access === 'forbidden') {
              expect('error' in got && got.error.code, what).toBe('forbidden');
              continue;
            }
            const hiddenNamed = named(read).some((c) => access.hidden.has(c));
            if (hiddenNamed) {
              expect('error' in got && got.error.code, what).toBe('forbidden');
              expect('error' in got && got.error.message, what).toMatch(/is hidden from you/);
              continue;
            }
            if ('error' in got) throw new Error(`${what}: ${got.error.message}`);
            const allowed = rows.filter((row) => sees(access.rules, row));
            const { engine: plain } = await openEngine(allowed);
            const expected = withoutColumns(await plain.catalog.getEntity(read), access.hidden);
            expect(got.output, what).toEqual(expected);
          }
        },
      ),
      { numRuns: 400 },
    );
  }, 30_000);
});

// ---- writes ----

type Patch = Partial<Row> & { id: number };
type Command =
  | { kind: 'append'; rows: Row[] }
  | { kind: 'update'; rows: Patch[] }
  | { kind: 'delete'; keys: { id: number }[] };

const uniqueIds = (min: number) =>
  fc.uniqueArray(fc.integer({ min: 1, max: 14 }), { minLength: min, maxLength: 2 });
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  uniqueIds(1).chain((ids) =>
    fc.tuple(...ids.map(() => fc.record(values))).map((rs): Command => ({
      kind: 'append',
      rows: rs.map((r, i) => ({ id: ids[i]! + 20, ...r, note: r.note || null })),
    })),
  ),
  uniqueIds(1).chain((ids) =>
    fc.tuple(...ids.map(() => fc.record(values, { requiredKeys: [] }))).map((ps): Command => ({
      kind: 'update',
      rows: ps.map((p, i) => ({ id: ids[i]!, ...p, ...(p.note === '' ? { note: null } : {}) })),
    })),
  ),
  uniqueIds(1).map((ids): Command => ({ kind: 'delete', keys: ids.map((id) => ({ id })) })),
);

/** The model's answer to a write: the rows after it, or why it is refused (every reason found). */
function applyWrite(
  model: Row[],
  access: Seen | 'forbidden',
  c: Command,
): Row[] | Set<'forbidden' | 'write_conflict'> {
  const refused = new Set<'forbidden' | 'write_conflict'>();
  if (access === 'forbidden') return new Set(['forbidden']);
  const fixed = (column: string) => access.hidden.has(column) || access.readOnly.has(column);
  const seen = (row: Row | undefined) => row !== undefined && sees(access.rules, row);
  const at = (id: number) => model.find((r) => r.id === id);
  const restricted = access.rules !== 'all' || access.hidden.size > 0 || access.readOnly.size > 0;
  switch (c.kind) {
    case 'append': {
      for (const row of c.rows) {
        if (at(row.id)) refused.add('write_conflict');
        if (restricted && COLUMNS.some((col) => fixed(col) && row[col] !== null)) refused.add('forbidden');
        if (!sees(access.rules, row)) refused.add('forbidden');
      }
      return refused.size > 0 ? refused : [...model, ...c.rows];
    }
    case 'update': {
      const next = model.map((r) => ({ ...r }));
      for (const patch of c.rows) {
        const before = at(patch.id);
        if (!before || !seen(before)) {
          refused.add('write_conflict');
          continue;
        }
        const after = { ...before, ...patch };
        for (const col of COLUMNS)
          if (
            col in patch &&
            (access.hidden.has(col) || (access.readOnly.has(col) && after[col] !== before[col]))
          )
            refused.add('forbidden');
        if (!sees(access.rules, after)) refused.add('forbidden');
        Object.assign(
          next.find((r) => r.id === patch.id)!,
          patch,
        );
      }
      return refused.size > 0 ? refused : next;
    }
    case 'delete': {
      for (const { id } of c.keys) if (!seen(at(id))) refused.add('write_conflict');
      return refused.size > 0 ? refused : model.filter((r) => !c.keys.some((k) => k.id === r.id));
    }
  }
}

function send(engine: Engine, principal: Principal, c: Command): Promise<unknown> {
  const catalog = engine.as(principal).catalog;
  if (c.kind === 'append') return catalog.append('items', c.rows);
  if (c.kind === 'delete') return catalog.delete('items', c.keys);
  return catalog.update('items', c.rows);
}

const trimmed = (cells: CellValue[][] | undefined) =>
  (cells ?? [])
    .map((row) => {
      const out = row.map((cell) => (cell === undefined || cell === '' ? null : cell));
      while (out.length > 0 && out.at(-1) === null) out.pop();
      return out;
    })
    .filter((row) => row.length > 0);

describe('engine.as(p) writes against the model', () => {
  it('end as the model: unseen rows untouched, refusals change nothing, an unseen row is a missing key', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        policyArb,
        fc.array(fc.tuple(principalArb, commandArb), { minLength: 1, maxLength: 4 }),
        async (rows, policy, commands) => {
          const { engine, sheets } = await openEngine(rows, policy);
          let model = rows;
          for (const [principal, command] of commands) {
            const access = accessOf(policy, principal, 'write');
            const expected = applyWrite(model, access, command);
            const what = JSON.stringify({
              principal,
              command,
              access:
                access === 'forbidden'
                  ? access
                  : { rules: access.rules, hidden: [...access.hidden], readOnly: [...access.readOnly] },
            });
            const error = await send(engine, principal, command).then(
              () => undefined,
              (e: unknown) => e as { code?: string; message: string },
            );
            if (expected instanceof Set) {
              expect(error?.code, what).toBeDefined();
              if (expected.size === 1)
                expect(error?.code, `${what}: ${error?.message}`).toBe([...expected][0]);
              else expect(['forbidden', 'write_conflict'], what).toContain(error?.code);
            } else {
              if (error) throw new Error(`${what}: ${error.message}`);
              model = expected;
            }
            expect(trimmed(sheets.cells('book', 'items')), what).toEqual(trimmed(cellsOf(model)));
          }
        },
      ),
      { numRuns: 400 },
    );
  }, 30_000);

  it('refuses a read-only or hidden column on an unseen row exactly as on a missing one', async () => {
    const policy: AccessPolicy = {
      roles: { north: { grants: ['entity.read:items', 'entity.write:items'] } },
      rows: [
        {
          entity: 'items',
          roles: ['north'],
          filters: [{ column: 'owner', operator: 'EQUALS' as const, value: '{{user.id}}' }],
        },
      ],
      columns: [{ entity: 'items', roles: ['north'], read_only: ['region'], hidden: ['note'] }],
    };
    const rows: Row[] = [
      { id: 1, owner: 'u1', email: null, region: 'north', amount: 1, note: 'mine' },
      { id: 2, owner: 'u2', email: null, region: 'south', amount: 2, note: 'theirs' },
    ];
    const { engine } = await openEngine(rows, policy);
    const u1: Principal = { id: 'u1', kind: 'user', roles: ['north'] };
    const refusal = (patch: Patch) =>
      engine
        .as(u1)
        .catalog.update('items', [patch])
        .then(
          () => 'written',
          (e: unknown) =>
            `${(e as { code: string }).code}: ${(e as Error).message.replaceAll(String(patch.id), 'N')}`,
        );
    // Whatever region the unseen row 2 holds, the answer is that of the missing row 99.
    for (const region of ['south', 'north', 'east'])
      expect(await refusal({ id: 2, region })).toBe(await refusal({ id: 99, region }));
    expect(await refusal({ id: 2, note: 'n' })).toBe(await refusal({ id: 99, note: 'n' }));
  });
});
