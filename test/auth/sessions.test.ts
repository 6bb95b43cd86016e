import { describe, expect, it } from 'vitest';
import { Sessions } from '../../src/auth/sessions.js';
import type { Principal } from '../../src/index.js';
import { TARGETS, clock, ready } from './targets.js';

const ada: Principal = { id: 'u-ada', kind: 'user', roles: ['admin'], email: 'ada@example.com', name: 'Ada' };
const bob: Principal = { id: 'u-bob', kind: 'user', roles: ['sales'], email: 'bob@example.com' };
const MINUTE = 60_000;

describe.each(TARGETS)('sessions on $name', (target) => {
  it('begins each session with a new token, stored only as its SHA-256, with a form token', async () => {
    const time = clock();
    const { storage, dump } = await target.open();
    const sessions = new Sessions(storage, ready, { now: time.now });
    const first = await sessions.create(ada);
    const second = await sessions.create(ada);
    expect(first).toEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      csrf: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expires_at: '2030-01-01T12:00:00.000Z',
    });
    expect(second.token).not.toBe(first.token);
    expect(second.csrf).not.toBe(first.csrf);
    expect(first.csrf).not.toBe(first.token);
    const stored = await dump();
    expect(stored).not.toContain(first.token);
    expect(stored).not.toContain(second.token);
    expect(await sessions.get(first.token)).toEqual({
      principal: ada,
      csrf: first.csrf,
      user_id: 'u-ada',
      expires_at: first.expires_at,
    });
    const service = await sessions.create({ id: 'key-1', kind: 'key', roles: [] });
    expect(await sessions.get(service.token)).not.toHaveProperty('user_id');
    for (const wrong of ['', 'x', `${first.token}x`, first.csrf, undefined])
      expect(await sessions.get(wrong as never)).toBeUndefined();
  });

  it('ends a session idle for 120 minutes, noting its use at most once a minute', async () => {
    const time = clock();
    const { storage } = await target.open();
    const sessions = new Sessions(storage, ready, { now: time.now });
    const { token } = await sessions.create(ada);
    let puts = 0;
    const put = storage.put.bind(storage);
    storage.put = (...args: Parameters<typeof put>) => (puts++, put(...args));
    // Used every 100 minutes: never idle for 120.
    for (let i = 0; i < 5; i++) {
      time.advance(100 * MINUTE);
      expect(await sessions.get(token)).toBeDefined();
    }
    expect(puts).toBe(5);
    for (let i = 0; i < 10; i++) {
      time.advance(1_000);
      await sessions.get(token);
    }
    expect(puts).toBe(5);
    time.advance(120 * MINUTE);
    expect(await sessions.get(token)).toBeUndefined();
    expect((await storage.list('sessions')).length).toBe(0);
    storage.put = put;
  });

  it('ends a session 12 hours after it began however busy, and takes other lengths', async () => {
    const time = clock();
    const { storage } = await target.open();
    const sessions = new Sessions(storage, ready, { now: time.now });
    const { token } = await sessions.create(ada);
    const short = await sessions.create(bob, { idleMinutes: 5, absoluteHours: 1 });
    expect(short.expires_at).toBe('2030-01-01T01:00:00.000Z');
    for (let minutes = 0; minutes < 12 * 60 - 30; minutes += 30) {
      time.advance(30 * MINUTE);
      expect(await sessions.get(token)).toBeDefined();
    }
    time.advance(30 * MINUTE);
    expect(await sessions.get(token)).toBeUndefined();
    expect(await sessions.get(short.token)).toBeUndefined();

    const idle = await sessions.create(bob, { idleMinutes: 5 });
    time.advance(5 * MINUTE - 1);
    expect(await sessions.get(idle.token)).toBeDefined();
    time.advance(5 * MINUTE);
    expect(await sessions.get(idle.token)).toBeUndefined();
    await expect(sessions.create(ada, { idleMinutes: 0 })).rejects.toThrow(
      /idleMinutes must be a positive number/,
    );
    await expect(sessions.create(ada, { absoluteHours: 'x' as never })).rejects.toThrow(/absoluteHours/);
    await expect(sessions.create({ id: '', kind: 'user', roles: [] })).rejects.toThrow(/principal.id/);
  });

  it('ends one session at sign-out, and every session of a user with endFor', async () => {
    const time = clock();
    const { storage } = await target.open();
    const sessions = new Sessions(storage, ready, { now: time.now });
    const [a1, a2, b1] = [await sessions.create(ada), await sessions.create(ada), await sessions.create(bob)];
    expect(await sessions.end(a1.token)).toBe(true);
    expect(await sessions.end(a1.token)).toBe(false);
    expect(await sessions.get(a1.token)).toBeUndefined();
    expect(await sessions.get(a2.token)).toBeDefined();
    const a3 = await sessions.create(ada);
    expect(await sessions.endFor('u-ada')).toBe(2);
    expect(await sessions.get(a2.token)).toBeUndefined();
    expect(await sessions.get(a3.token)).toBeUndefined();
    expect(await sessions.get(b1.token)).toMatchObject({ principal: bob });
    expect(await sessions.endFor('u-ada')).toBe(0);
    // A use noted after the session ended does not bring it back.
    time.advance(2 * MINUTE);
    await sessions.end(b1.token);
    expect(await sessions.get(b1.token)).toBeUndefined();
  });

  it('is shared by every process on the storage', async () => {
    const { storage } = await target.open();
    const one = new Sessions(storage, ready);
    const two = new Sessions(storage, ready);
    const { token } = await one.create(ada);
    expect(await two.get(token)).toMatchObject({ principal: ada });
    await two.end(token);
    expect(await one.get(token)).toBeUndefined();
  });
});
