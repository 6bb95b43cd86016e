/**
 * Bytes as lower-case hex text, and the SHA-256 of text as such (Web Crypto, so it runs on every runtime).
 * @module
 */

/** `bytes` as lower-case hex, two digits a byte. @internal */
export function hexOf(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** The SHA-256 digest of `text` (UTF-8). @internal */
export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}
