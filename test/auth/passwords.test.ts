import { describe, expect, it } from 'vitest';
import { MIN_PASSWORD_LENGTH, hashPassword, verifyPassword } from '../../src/auth/passwords.js';
import { ValidationError } from '../../src/index.js';

const PASSWORD = 'correct horse battery staple';

describe('password hashes', () => {
  it('are argon2id PHC strings on Node, with a new salt each time', async () => {
    const first = await hashPassword(PASSWORD);
    const second = await hashPassword(PASSWORD);
    expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(second).not.toBe(first);
    expect(first).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, first)).toBe(true);
    expect(await verifyPassword(PASSWORD, second)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, first)).toBe(false);
    expect(await verifyPassword('', first)).toBe(false);
  });

  it('are PBKDF2-SHA256 with 600,000 iterations when asked (the fallback where argon2 does not load)', async () => {
    const phc = await hashPassword(PASSWORD, { algorithm: 'pbkdf2-sha256' });
    expect(phc).toMatch(/^\$pbkdf2-sha256\$i=600000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyPassword(PASSWORD, phc)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, phc)).toBe(false);
    // A hash of another iteration count is read with its own count.
    const salt = new Uint8Array(16).fill(7);
    const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(PASSWORD), 'PBKDF2', false, [
      'deriveBits',
    ]);
    const bits = await crypto.subtle.deriveBits(
      { name: 'PBKDF2', hash: 'SHA-256', salt, iterations: 1000 },
      key,
      256,
    );
    const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64').replace(/=+$/, '');
    const made = `$pbkdf2-sha256$i=1000$${b64(salt)}$${b64(new Uint8Array(bits))}`;
    expect(await verifyPassword(PASSWORD, made)).toBe(true);
    expect(await verifyPassword('another password', made)).toBe(false);
  });

  it('reads anything else as no match', async () => {
    for (const phc of [
      '',
      'plain text',
      '$argon2id$v=19$m=19456,t=2,p=1$broken',
      '$pbkdf2-sha256$i=0$AAAA$AAAA',
      '$pbkdf2-sha256$i=600000$***$AAAA',
      '$bcrypt$whatever',
    ])
      expect(await verifyPassword(PASSWORD, phc)).toBe(false);
    expect(await verifyPassword(undefined as never, await hashPassword(PASSWORD))).toBe(false);
  });

  it(`refuses a password shorter than ${MIN_PASSWORD_LENGTH} characters, naming password`, async () => {
    for (const short of ['', 'elevenchars', 42]) {
      const error = await hashPassword(short as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([
        expect.objectContaining({
          path: 'password',
          message: 'password must be a string of at least 12 characters',
        }),
      ]);
    }
    // Characters, not UTF-16 units: twelve emoji are twelve characters.
    expect(await hashPassword('🔑'.repeat(12))).toMatch(/^\$argon2id\$/);
    await expect(hashPassword('🔑'.repeat(11))).rejects.toThrow(ValidationError);
  });
});
