import { hexOf, sha256 } from './hex.js';

/**
 * A UUID (version 8) made from the SHA-256 of `text`: the same text always gives the same id, so
 * a step delivered again finds what its earlier delivery made. @internal
 */
export async function derivedUuid(text: string): Promise<string> {
  const bytes = (await sha256(text)).subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = hexOf(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
