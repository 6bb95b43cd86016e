/**
 * Random tokens and their digests, for API keys and sessions: a token is shown once, and only its
 * SHA-256 is stored, as the key it is found by (Web Crypto, so it runs on every runtime).
 * @module
 */
import { hexOf, sha256 } from '../bytes/hex.js';

/** Bytes of randomness in a key's secret, a session token and a form token. */
const TOKEN_BYTES = 32;

/** `bytes` random bytes (32 by default) as base64url without padding (43 characters for 32). @internal */
export function randomToken(bytes = TOKEN_BYTES): string {
  const random = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
  let binary = '';
  for (const byte of random) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The pattern of a {@link randomToken} of 32 bytes. @internal */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The SHA-256 of `token` as lower-case hex: the storage key of what the token unlocks. @internal */
export async function tokenDigest(token: string): Promise<string> {
  return hexOf(await sha256(token));
}
