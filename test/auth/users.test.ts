import { describe, expect, it } from 'vitest';
import { Users } from '../../src/auth/users.js';
import { ConflictError, NotFoundError, ValidationError } from '../../src/index.js';
import { TARGETS, clock, ready } from './targets.js';

const PASSWORD = 'correct horse battery staple';
const at = { address: '203.0.113.7' };

describe.each(TARGETS)('users on $name', (target) => {
  it('makes users with one e-mail address each, in any case, and never shows a password or its hash', async () => {
    const { storage, dump } = await target.open();
    const users = new Users(storage, ready);
    const ada = await users.create({
      email: ' Ada@Example.COM ',
      name: 'Ada',
      roles: ['admin'],
      password: PASSWORD,
    });
    expect(ada).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'ada@example.com',
      name: 'Ada',
      roles: ['admin'],
      disabled: false,
      created_at: expect.any(String),
    });
    await expect(users.create({ email: 'ADA@example.com', roles: [] })).rejects.toThrow(ConflictError);
    const bob = await users.create({ email: 'bob@example.com', roles: ['sales'] });
    expect(bob).not.toHaveProperty('name');
    expect(await users.get(ada.id)).toEqual(ada);
    expect(await users.get('nobody')).toBeUndefined();
    expect(await users.list()).toEqual([ada, bob]);
    expect(await users.findByEmail('ADA@EXAMPLE.com')).toEqual(ada);
    const shown = JSON.stringify([
      await users.list(),
      await users.get(ada.id),
      await users.findByEmail(ada.email),
    ]);
    expect(shown).not.toMatch(/argon2|pbkdf2|password/);
    const stored = await dump();
    expect(stored).toContain('$argon2id$');
    expect(stored).not.toContain(PASSWORD);
  });

  it('refuses wrong input with a ValidationError naming each field', async () => {
    const { storage } = await target.open();
    const users = new Users(storage, ready);
    const paths = async (input: unknown) => {
      const error = await users.create(input as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).issues.map((issue) => issue.path);
    };
    expect(await paths({ email: 'not an address', name: '', roles: 'admin', password: 'short' })).toEqual([
      'email',
      'name',
      'roles',
      'password',
    ]);
    expect(await paths({ email: 'a@b', roles: [] })).toEqual(['email']);
    expect(await paths({ email: 'a@b.co', roles: [], password: 12345678901234 })).toEqual(['password']);
    await expect(users.setRoles('x', 'admin' as never)).rejects.toThrow(ValidationError);
    expect(await users.list()).toEqual([]);
  });

  it('sets roles and passwords, disables, and refuses an unknown id', async () => {
    const { storage } = await target.open();
    const users = new Users(storage, ready);
    const ada = await users.create({ email: 'ada@example.com', roles: ['admin'], password: PASSWORD });
    expect(await users.setRoles(ada.id, ['sales', ' sales ', 'finance'])).toMatchObject({
      roles: ['sales', 'finance'],
    });
    await users.setPassword(ada.id, 'another long password');
    expect((await users.signIn('ada@example.com', PASSWORD, at)).ok).toBe(false);
    expect(await users.signIn('ada@example.com', 'another long password', at)).toEqual({
      ok: true,
      principal: { id: ada.id, kind: 'user', roles: ['sales', 'finance'], email: 'ada@example.com' },
    });
    await expect(users.setPassword(ada.id, 'short')).rejects.toThrow(ValidationError);
    expect(await users.disable(ada.id)).toMatchObject({ disabled: true });
    // Only the right password learns that the account is disabled.
    expect(await users.signIn('ada@example.com', 'another long password', at)).toEqual({
      ok: false,
      reason: 'disabled',
    });
    expect(await users.signIn('ada@example.com', PASSWORD, at)).toEqual({ ok: false, reason: 'invalid' });
    for (const call of [
      () => users.setRoles('nobody', []),
      () => users.setPassword('nobody', PASSWORD),
      () => users.disable('nobody'),
    ])
      await expect(call()).rejects.toThrow(NotFoundError);
  });

  it('signs in by e-mail in any case, with one answer for an unknown address and a wrong password', async () => {
    const { storage } = await target.open();
    const users = new Users(storage, ready);
    const ada = await users.create({
      email: 'ada@example.com',
      name: 'Ada',
      roles: ['admin'],
      password: PASSWORD,
    });
    expect(await users.signIn(' ADA@example.com', PASSWORD, at)).toEqual({
      ok: true,
      principal: { id: ada.id, kind: 'user', roles: ['admin'], email: 'ada@example.com', name: 'Ada' },
    });
    const wrong = await users.signIn('ada@example.com', 'not the password', at);
    const unknown = await users.signIn('eve@example.com', PASSWORD, at);
    expect(wrong).toEqual({ ok: false, reason: 'invalid' });
    expect(unknown).toEqual(wrong);
    expect(await users.signIn('', '', {})).toEqual(wrong);
    // An unknown address costs a password check too: about as long as a wrong password.
    const time = async (email: string) => {
      const started = performance.now();
      await users.signIn(email, 'not the password', { address: `198.51.100.${Math.random()}` });
      return performance.now() - started;
    };
    const known = Math.min(await time('ada@example.com'), await time('ada@example.com'));
    const missing = Math.min(await time('eve@example.com'), await time('mallory@example.com'));
    expect(missing).toBeGreaterThan(known / 4);
    expect(missing).toBeLessThan(known * 4);
  });

  it('locks an account after 5 failures in a window, for any address, until the window ends', async () => {
    const time = clock();
    const { storage } = await target.open();
    const users = new Users(storage, ready, { now: time.now });
    await users.create({ email: 'ada@example.com', roles: [], password: PASSWORD });
    for (let i = 0; i < 5; i++)
      expect(await users.signIn('ada@example.com', `wrong ${i}`, { address: `10.0.0.${i}` })).toEqual({
        ok: false,
        reason: 'invalid',
      });
    expect(await users.signIn('ADA@example.com', PASSWORD, { address: '10.0.1.1' })).toEqual({
      ok: false,
      reason: 'locked',
    });
    // An unknown address is locked the same way: locking says nothing about who exists.
    for (let i = 0; i < 5; i++) await users.signIn('eve@example.com', `wrong ${i}`, { address: '10.0.2.1' });
    expect(await users.signIn('eve@example.com', PASSWORD, { address: '10.0.2.2' })).toEqual({
      ok: false,
      reason: 'locked',
    });
    time.advance(15 * 60_000);
    expect((await users.signIn('ada@example.com', PASSWORD, at)).ok).toBe(true);
  });

  it('clears the account count at a successful sign-in', async () => {
    const time = clock();
    const { storage } = await target.open();
    const users = new Users(storage, ready, { now: time.now });
    await users.create({ email: 'ada@example.com', roles: [], password: PASSWORD });
    for (let i = 0; i < 4; i++) await users.signIn('ada@example.com', 'wrong password', at);
    expect((await users.signIn('ada@example.com', PASSWORD, at)).ok).toBe(true);
    for (let i = 0; i < 4; i++)
      expect(await users.signIn('ada@example.com', 'wrong password', at)).toEqual({
        ok: false,
        reason: 'invalid',
      });
    expect((await users.signIn('ada@example.com', PASSWORD, at)).ok).toBe(true);
  });

  it('locks an address after 20 failures in a window, whichever accounts they were for', async () => {
    const time = clock();
    const { storage } = await target.open();
    const users = new Users(storage, ready, { now: time.now });
    await users.create({ email: 'ada@example.com', roles: [], password: PASSWORD });
    // Successful sign-ins from an address (an office behind one NAT) do not count against it.
    for (let i = 0; i < 25; i++) expect((await users.signIn('ada@example.com', PASSWORD, at)).ok).toBe(true);
    for (let i = 0; i < 20; i++)
      expect(await users.signIn(`user${i}@example.com`, 'wrong password', at)).toEqual({
        ok: false,
        reason: 'invalid',
      });
    expect(await users.signIn('ada@example.com', PASSWORD, at)).toEqual({ ok: false, reason: 'locked' });
    expect((await users.signIn('ada@example.com', PASSWORD, { address: '203.0.113.8' })).ok).toBe(true);
    time.advance(15 * 60_000);
    expect((await users.signIn('ada@example.com', PASSWORD, at)).ok).toBe(true);
  }, 60_000);

  it('counts attempts sent at once, and from two processes on one storage, together', async () => {
    const time = clock();
    const { storage } = await target.open();
    const one = new Users(storage, ready, { now: time.now });
    const two = new Users(storage, ready, { now: time.now });
    await one.create({ email: 'ada@example.com', roles: [], password: PASSWORD });
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? one : two).signIn('ada@example.com', `guess ${i}`, { address: `10.9.0.${i}` }),
      ),
    );
    const reasons = burst.map((result) => (result.ok ? 'ok' : result.reason));
    expect(reasons.filter((r) => r === 'invalid')).toHaveLength(5);
    expect(reasons.filter((r) => r === 'locked')).toHaveLength(7);
    expect(await two.signIn('ada@example.com', PASSWORD, at)).toEqual({ ok: false, reason: 'locked' });
  });

  it('keeps users an OpenID provider signs in: made without a password, their roles updated', async () => {
    const { storage } = await target.open();
    const users = new Users(storage, ready);
    const made = await users.upsertExternal({ email: 'Olga@Example.com', name: 'Olga', roles: ['sales'] });
    expect(made).toMatchObject({
      email: 'olga@example.com',
      name: 'Olga',
      roles: ['sales'],
      disabled: false,
    });
    const again = await users.upsertExternal({ email: 'olga@example.com', roles: ['manager'] });
    expect(again).toEqual({ ...made, roles: ['manager'] });
    expect(await users.list()).toHaveLength(1);
    expect(await users.signIn('olga@example.com', 'any password at all', at)).toEqual({
      ok: false,
      reason: 'invalid',
    });
    await users.disable(made.id);
    expect(await users.upsertExternal({ email: 'olga@example.com', roles: ['x'] })).toMatchObject({
      disabled: true,
    });
  });
});
