import { describe, expect, it, vi } from 'vitest';

// Where the native argon2 package cannot load (workerd, Deno without it): its import fails.
vi.mock('@node-rs/argon2', () => {
  throw new Error('Cannot find native binding');
});

const { hashPassword, verifyPassword } = await import('../../src/auth/passwords.js');

describe('password hashes without argon2', () => {
  it('fall back to PBKDF2-SHA256, which verifies', async () => {
    const phc = await hashPassword('correct horse battery staple');
    expect(phc).toMatch(/^\$pbkdf2-sha256\$i=600000\$/);
    expect(await verifyPassword('correct horse battery staple', phc)).toBe(true);
    expect(await verifyPassword('correct horse battery stable', phc)).toBe(false);
  });

  it('say which package an argon2id hash needs, and refuse argon2id when asked for it', async () => {
    const argon =
      '$argon2id$v=19$m=19456,t=2,p=1$9sXxaCkopI28v7Lc+0WkaQ$IxyuEMqPpaXUnIG4P1xZsU067JyPGWVePr8lButwFkw';
    await expect(verifyPassword('correct horse battery', argon)).rejects.toMatchObject({
      code: 'missing_dependency',
      message: expect.stringContaining('@node-rs/argon2'),
    });
    await expect(hashPassword('correct horse battery', { algorithm: 'argon2id' })).rejects.toMatchObject({
      code: 'missing_dependency',
    });
  });
});
