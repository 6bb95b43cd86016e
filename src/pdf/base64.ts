/**
 * Edge-safe base64 for byte arrays (no `Buffer`): chunked `String.fromCharCode` + `btoa`/`atob`.
 * @module
 */

const CHUNK = 0x8000;

/**
 * Encodes bytes as standard base64 (with `=` padding).
 * @example encodeBase64(new Uint8Array([104, 105])) // 'aGk='
 */
export function encodeBase64(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += CHUNK) {
    const chunk = bytes.subarray(offset, offset + CHUNK);
    parts.push(String.fromCharCode.apply(null, chunk as unknown as number[]));
  }
  return btoa(parts.join(''));
}

/**
 * Decodes standard or URL-safe base64 (padding optional, whitespace ignored) into bytes.
 * @throws TypeError when the text is not base64.
 * @example decodeBase64('aGk=') // Uint8Array [104, 105]
 */
export function decodeBase64(text: string): Uint8Array {
  let clean = text.replace(/[\s]/g, '').replace(/-/g, '+').replace(/_/g, '/');
  const remainder = clean.length % 4;
  if (remainder === 1) throw new TypeError('decodeBase64: the text is not valid base64 (bad length)');
  if (remainder !== 0) clean += '='.repeat(4 - remainder);
  let binary: string;
  try {
    binary = atob(clean);
  } catch (cause) {
    throw new TypeError('decodeBase64: the text is not valid base64', { cause });
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
