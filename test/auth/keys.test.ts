import { describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/auth/keys.js';
import { ValidationError } from '../../src/index.js';
import { TARGETS, clock, ready } from './targets.js';

describe.each(TARGETS)('API keys on $name', (target) => {
  it('shows the secret once and stores only its SHA-256', async () => {
    const { storage, dump } = await target.open();
    const keys = new ApiKeys(storage, ready);
    const created = await keys.create({ name: 'nightly import', roles: ['importer', 'reader'] });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'nightly import',
      roles: ['importer', 'reader'],
      expires_at: null,
      secret: expect.stringMatching(/^sw_[A-Za-z0-9_-]{43}$/),
    });
    const digest = Buffer.from(
      await crypto.subtle.digest('SHA-256', new TextEncoder().encode(created.secret)),
    ).toString('hex');
    expect(await storage.get('api_keys', digest)).toMatchObject({ id: created.id, name: 'nightly import' });
    // No stored byte holds the secret, nor its random part.
    const stored = await dump();
    expect(stored).toContain(digest);
    expect(stored).not.toContain(created.secret);
    expect(stored).not.toContain(created.secret.slice(3));
    // The id is not derived from the secret.
    expect(created.secret).not.toContain(created.id);
    const listed = await keys.list();
    expect(listed).toEqual([
      {
        id: created.id,
        name: 'nightly import',
        roles: ['importer', 'reader'],
        expires_at: null,
        created_at: expect.any(String),
        last_used_at: null,
        revoked_at: null,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(digest);
  });

  it('verifies a secret as the key principal; anything else is undefined', async () => {
    const { storage } = await target.open();
    const keys = new ApiKeys(storage, ready);
    const { id, secret } = await keys.create({ name: 'ci', roles: ['deployer'] });
    expect(await keys.verify(secret)).toEqual({ id, kind: 'key', roles: ['deployer'], name: 'ci' });
    const other = `sw_${'A'.repeat(43)}`;
    for (const wrong of [
      other,
      secret.slice(0, -1),
      `${secret}x`,
      secret.slice(3),
      '',
      'Bearer x',
      secret.toUpperCase(),
    ])
      expect(await keys.verify(wrong)).toBeUndefined();
    expect(await keys.verify(undefined as never)).toBeUndefined();
  });

  it('refuses an expired key and a revoked one; revoke says whether a working key was found', async () => {
    const time = clock();
    const { storage } = await target.open();
    const keys = new ApiKeys(storage, ready, { now: time.now });
    const expiry = new Date(time.now() + 60_000).toISOString();
    const soon = await keys.create({ name: 'soon', roles: [], expires_at: expiry });
    time.advance(1);
    const forever = await keys.create({ name: 'forever', roles: ['a'] });
    expect(soon.expires_at).toBe(expiry);
    expect(await keys.verify(soon.secret)).toMatchObject({ id: soon.id });
    time.advance(59_999);
    expect(await keys.verify(soon.secret)).toBeUndefined();
    expect(await keys.verify(forever.secret)).toMatchObject({ id: forever.id });

    expect(await keys.revoke(forever.id)).toBe(true);
    expect(await keys.verify(forever.secret)).toBeUndefined();
    expect(await keys.revoke(forever.id)).toBe(false);
    expect(await keys.revoke('no-such-id')).toBe(false);
    const listed = await keys.list();
    expect(listed.map((k) => [k.name, k.revoked_at])).toEqual([
      ['soon', null],
      ['forever', new Date(time.now()).toISOString()],
    ]);
  });

  it('a key revoked by another process stops working within a second (at once in the revoking one)', async () => {
    const time = clock();
    const { storage } = await target.open();
    const here = new ApiKeys(storage, ready, { now: time.now });
    const there = new ApiKeys(storage, ready, { now: time.now });
    const key = await here.create({ name: 'shared', roles: ['a'] });
    expect(await there.verify(key.secret)).toMatchObject({ id: key.id });
    expect(await here.verify(key.secret)).toMatchObject({ id: key.id });
    expect(await here.revoke(key.id)).toBe(true);
    expect(await here.verify(key.secret)).toBeUndefined();
    // The other process checked it a moment ago: it takes it as it was for at most a second.
    time.advance(999);
    expect(await there.verify(key.secret)).toMatchObject({ id: key.id });
    time.advance(1);
    expect(await there.verify(key.secret)).toBeUndefined();
  });

  it('notes the last use at most once a minute, without writing the key record back', async () => {
    const time = clock();
    const { storage } = await target.open();
    const puts: string[] = [];
    const counted = new Proxy(storage, {
      get(object, property) {
        const value = Reflect.get(object, property, object) as unknown;
        if (property === 'put')
          return (collection: string, key: string, ...rest: unknown[]) => {
            puts.push(`${collection}:${key}`);
            return (value as Function).call(object, collection, key, ...rest);
          };
        return typeof value === 'function' ? value.bind(object) : value;
      },
    });
    const keys = new ApiKeys(counted, ready, { now: time.now });
    const { secret } = await keys.create({ name: 'busy', roles: [] });
    puts.length = 0;
    for (let i = 0; i < 10; i++) {
      expect(await keys.verify(secret)).toBeDefined();
      time.advance(1_000);
    }
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatch(/^api_keys:[0-9a-f]{64}\/last_used$/);
    expect((await keys.list())[0]!.last_used_at).toBe('2030-01-01T00:00:00.000Z');
    time.advance(60_000);
    await keys.verify(secret);
    expect(puts).toHaveLength(2);
    expect((await keys.list())[0]!.last_used_at).toBe('2030-01-01T00:01:10.000Z');
    // Verifying writes only the last use, never the key's record: a revoke made meanwhile stays.
    expect(puts.every((put) => put.endsWith('/last_used'))).toBe(true);
    const { id } = (await keys.list())[0]!;
    await keys.revoke(id);
    time.advance(60_000);
    expect(await keys.verify(secret)).toBeUndefined();
    expect((await keys.list())[0]!.revoked_at).not.toBeNull();
  });

  it('refuses wrong input with a ValidationError naming each field', async () => {
    const time = clock();
    const { storage } = await target.open();
    const keys = new ApiKeys(storage, ready, { now: time.now });
    const issues = async (input: unknown) => {
      const error = await keys.create(input as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      return (error as ValidationError).issues.map((issue) => issue.path);
    };
    expect(await issues({ name: '', roles: 'admin' })).toEqual(['name', 'roles']);
    expect(await issues({ name: 'x', roles: [''] })).toEqual(['roles']);
    expect(await issues({ name: 'x', roles: [], expires_at: 'tomorrow' })).toEqual(['expires_at']);
    expect(await issues({ name: 'x', roles: [], expires_at: '2030-01-01' })).toEqual(['expires_at']);
    expect(await issues({ name: 'x', roles: [], expires_at: '2029-12-31T23:59:59Z' })).toEqual([
      'expires_at',
    ]);
    expect(await issues(undefined)).toEqual(['name', 'roles']);
    const error = await keys
      .create({ name: 'x', roles: [], expires_at: '2020-01-01T00:00:00Z' })
      .catch((e) => e);
    expect((error as Error).message).toBe('expires_at: expires_at must be in the future');
    expect(await keys.list()).toEqual([]);
  });
});
