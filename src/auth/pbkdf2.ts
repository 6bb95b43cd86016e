/**
 * PBKDF2-SHA256 password hashes through Web Crypto, for runtimes where argon2 does not load:
 * `$pbkdf2-sha256$i=<iterations>$<salt>$<hash>`, salt and hash in base64 without padding (PHC).
 * @module
 */

/** OWASP's count for PBKDF2-HMAC-SHA256 (2023). */
const ITERATIONS = 600_000;
/** Most iterations a stored hash may ask for, so a damaged record cannot hang a sign-in. */
const MOST_ITERATIONS = 10_000_000;
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const PHC = /^\$pbkdf2-sha256\$i=(\d{1,8})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** The PHC string of `password` with a random salt. @internal */
export async function pbkdf2Hash(password: string): Promise<string> {
  const salt = globalThis.crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, ITERATIONS, HASH_BYTES);
  return `$pbkdf2-sha256$i=${ITERATIONS}$${base64(salt)}$${base64(hash)}`;
}

/** Whether `password` matches the PHC string `phc`; a malformed string is false. @internal */
export async function pbkdf2Verify(password: string, phc: string): Promise<boolean> {
  const match = PHC.exec(phc);
  if (!match) return false;
  const iterations = Number(match[1]);
  if (iterations < 1 || iterations > MOST_ITERATIONS) return false;
  const salt = unbase64(match[2]!);
  const expected = unbase64(match[3]!);
  if (!salt || !expected || expected.length === 0) return false;
  const actual = await derive(password, salt, iterations, expected.length);
  let difference = 0;
  for (let i = 0; i < expected.length; i++) difference |= expected[i]! ^ actual[i]!;
  return difference === 0;
}

async function derive(password: string, salt: Uint8Array, iterations: number, bytes: number) {
  const subtle = globalThis.crypto.subtle;
  const key = await subtle.importKey('raw', new TextEncoder().encode(password), 'PBKDF2', false, [
    'deriveBits',
  ]);
  const bits = await subtle.deriveBits(
    { name: 'PBKDF2', hash: 'SHA-256', salt: salt as Uint8Array<ArrayBuffer>, iterations },
    key,
    bytes * 8,
  );
  return new Uint8Array(bits);
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/=+$/, '');
}

function unbase64(text: string): Uint8Array | undefined {
  try {
    const binary = atob(text + '='.repeat((4 - (text.length % 4)) % 4));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}
