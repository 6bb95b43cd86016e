import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/adapters/postgres/index.js';
import { ApiKeys } from '../../src/auth/keys.js';
import { Users } from '../../src/auth/users.js';
import { Sessions } from '../../src/auth/sessions.js';
import { runCli } from '../../src/cli/cli.js';
import { AuditLog } from '../../src/access/audit.js';
import { inProcess, tempDir } from '../cli/helpers.js';

const temp = tempDir('auth-cli');
afterAll(() => temp.remove());
const project = join(temp.dir, 'project');
mkdirSync(project);
const ready = async () => {};

/** `stepwire <args>` in this process, on the project's own database; `stdin` is what standard input holds. */
async function stepwire(args: string[], stdin?: string) {
  if (stdin === undefined) return inProcess([...args, '--dir', project]);
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: (l: string) => out.push(l),
    err: (l: string) => err.push(l),
    stopped: () => Promise.resolve(),
    stdin: async () => stdin,
  };
  const code = await runCli([...args, '--dir', project], io);
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** The project's database, opened while no command has it. */
async function withDatabase<T>(
  use: (stores: { keys: ApiKeys; users: Users; sessions: Sessions; audit: AuditLog }) => Promise<T>,
) {
  const db = await openPostgres(join(project, '.stepwire', 'db'));
  try {
    return await use({
      keys: new ApiKeys(db.storage, ready),
      users: new Users(db.storage, ready),
      sessions: new Sessions(db.storage, ready),
      audit: new AuditLog(db.storage, ready),
    });
  } finally {
    await db.close();
  }
}

describe('stepwire keys', () => {
  let id = '';
  it('create prints the secret once, alone on standard output, with a warning', async () => {
    const made = await stepwire([
      'keys',
      'create',
      '--name',
      'nightly import',
      '--roles',
      'importer, reader',
      '--expires',
      '2099-01-01T00:00:00Z',
    ]);
    expect(made).toMatchObject({ code: 0, stdout: expect.stringMatching(/^sw_[A-Za-z0-9_-]{43}$/) });
    expect(made.stderr).toMatch(
      /created key [0-9a-f-]{36} "nightly import", roles importer, reader, expires 2099-01-01T00:00:00.000Z/,
    );
    expect(made.stderr).toContain('shown this once and cannot be shown again');
    id = /created key ([0-9a-f-]{36})/.exec(made.stderr)![1]!;
    const principal = await withDatabase(async ({ keys, audit }) => {
      const entries = (await audit.list()).entries.map((e) => [e.action, e.resource, e.principal.id]);
      expect(entries).toEqual([['key.create', `key:${id}`, 'cli']]);
      return keys.verify(made.stdout);
    });
    expect(principal).toEqual({ id, kind: 'key', roles: ['importer', 'reader'], name: 'nightly import' });
  }, 60_000);

  it('list shows every key without a secret; revoke stops one', async () => {
    const listed = await stepwire(['keys', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(
      `${id}  "nightly import"  roles importer, reader  expires 2099-01-01T00:00:00.000Z  last used 20`,
    );
    expect(listed.stdout).not.toContain('sw_');
    const json = await stepwire(['keys', 'list', '--json']);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ id, revoked_at: null })]);
    expect(await stepwire(['keys', 'revoke', id])).toMatchObject({ code: 0, stdout: `revoked key ${id}` });
    expect(await stepwire(['keys', 'revoke', id])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`no key "${id}" that works`),
    });
    expect((await stepwire(['keys', 'list'])).stdout).toContain('revoked 20');
  }, 60_000);

  it('refuses wrong input: usage errors with the help (2), invalid values naming the field (1)', async () => {
    const missing = await stepwire(['keys', 'create', '--roles', 'a']);
    expect(missing).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('stepwire keys: --name is required'),
    });
    expect(missing.stderr).toContain('Usage: stepwire keys create');
    expect(await stepwire(['keys', 'frobnicate'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('unknown subcommand "frobnicate"'),
    });
    expect(await stepwire(['keys'])).toMatchObject({ code: 2 });
    expect(
      await stepwire(['keys', 'create', '--name', 'x', '--roles', 'a', '--expires', 'tomorrow']),
    ).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('expires_at must be an ISO date-time'),
    });
    expect(await inProcess(['keys', 'list', '--dir', join(temp.dir, 'missing')])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('is not a folder'),
    });
    expect(await stepwire(['keys', '--help'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Usage: stepwire keys'),
    });
  }, 60_000);
});

describe('stepwire users', () => {
  it('add prints a one-time password, or takes one from standard input', async () => {
    const added = await stepwire([
      'users',
      'add',
      '--email',
      'Ada@Example.com',
      '--roles',
      'admin',
      '--name',
      'Ada',
    ]);
    expect(added).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) });
    expect(added.stderr).toMatch(/created user ada@example.com "Ada" \([0-9a-f-]{36}\), roles admin/);
    expect(added.stderr).toContain('shown this once');
    const piped = await stepwire(
      ['users', 'add', '--email', 'bob@example.com', '--roles', 'sales,support', '--password-stdin'],
      'bobs long password\n',
    );
    expect(piped).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^created user bob@example.com \(.*\), roles sales, support$/),
    });
    const short = await stepwire(
      ['users', 'add', '--email', 'eve@example.com', '--roles', 'x', '--password-stdin'],
      'short\n',
    );
    expect(short).toMatchObject({
      code: 1,
      stderr: 'stepwire users: password must be a string of at least 12 characters',
    });
    expect(await stepwire(['users', 'add', '--email', 'ADA@example.com', '--roles', 'x'])).toMatchObject({
      code: 1,
      stderr: 'stepwire users: user "ada@example.com" already exists',
    });
    await withDatabase(async ({ users }) => {
      expect((await users.signIn('ada@example.com', added.stdout, {})).ok).toBe(true);
      expect((await users.signIn('bob@example.com', 'bobs long password', {})).ok).toBe(true);
    });
    const listed = await stepwire(['users', 'list']);
    expect(listed.stdout.split('\n')).toEqual([
      expect.stringMatching(/^ada@example.com "Ada" \(.*\), roles admin$/),
      expect.stringMatching(/^bob@example.com \(.*\), roles sales, support$/),
    ]);
  }, 60_000);

  it('set-roles, reset-password and disable, each ending what it must', async () => {
    expect(await stepwire(['users', 'set-roles', 'BOB@example.com', 'finance'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('bob@example.com: roles finance'),
    });
    const session = await withDatabase(async ({ users, sessions }) => {
      const bob = (await users.findByEmail('bob@example.com'))!;
      expect(bob.roles).toEqual(['finance']);
      return (await sessions.create({ id: bob.id, kind: 'user', roles: bob.roles })).token;
    });
    const reset = await stepwire(['users', 'reset-password', 'bob@example.com']);
    expect(reset).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) });
    expect(reset.stderr).toContain('new password for bob@example.com; 1 session ended');
    await withDatabase(async ({ users, sessions }) => {
      expect(await sessions.get(session)).toBeUndefined();
      expect((await users.signIn('bob@example.com', 'bobs long password', {})).ok).toBe(false);
      expect((await users.signIn('bob@example.com', reset.stdout, {})).ok).toBe(true);
    });
    expect(await stepwire(['users', 'disable', 'bob@example.com'])).toMatchObject({
      code: 0,
      stdout: 'disabled bob@example.com; 0 sessions ended',
    });
    await withDatabase(async ({ users, audit }) => {
      expect(await users.signIn('bob@example.com', reset.stdout, {})).toEqual({
        ok: false,
        reason: 'disabled',
      });
      const actions = (await audit.list()).entries.map((e) => e.action);
      expect(actions).toEqual(
        expect.arrayContaining(['user.create', 'user.set_roles', 'user.reset_password', 'user.disable']),
      );
    });
    expect(await stepwire(['users', 'disable', 'nobody@example.com'])).toMatchObject({
      code: 1,
      stderr: 'stepwire users: user "nobody@example.com" does not exist',
    });
    expect(await stepwire(['users', 'set-roles', 'bob@example.com'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('missing arguments'),
    });
  }, 60_000);
});
