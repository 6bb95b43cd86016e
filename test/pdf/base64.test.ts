import { describe, expect, it } from 'vitest';
import { decodeBase64, encodeBase64 } from '../../src/pdf/base64.js';

describe('base64', () => {
  it('matches the standard encoding and round-trips every byte value', () => {
    const bytes = new Uint8Array(256).map((_, i) => i);
    const text = encodeBase64(bytes);
    expect(text).toBe(Buffer.from(bytes).toString('base64'));
    expect(decodeBase64(text)).toEqual(bytes);
    expect(encodeBase64(new Uint8Array([104, 105]))).toBe('aGk=');
  });

  it('round-trips several megabytes', () => {
    const bytes = new Uint8Array(3 * 1024 * 1024 + 7);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + (i >> 10)) & 0xff;
    const text = encodeBase64(bytes);
    expect(text === Buffer.from(bytes).toString('base64')).toBe(true);
    expect(Buffer.compare(decodeBase64(text), bytes)).toBe(0);
  });

  it('accepts URL-safe text, missing padding and line breaks', () => {
    const bytes = new Uint8Array([251, 255, 191, 0]);
    expect(decodeBase64('+/+/AA==')).toEqual(bytes);
    expect(decodeBase64('-_-_AA')).toEqual(bytes);
    expect(decodeBase64('+/+/\nAA==')).toEqual(bytes);
  });

  it('rejects text that is not base64', () => {
    expect(() => decodeBase64('abcde')).toThrow(TypeError);
    expect(() => decodeBase64('ab$d')).toThrow(TypeError);
  });
});
