import { describe, expect, it } from 'vitest';
import { setOwn } from '../../src/schema/own.js';

describe('setOwn', () => {
  it('sets ordinary keys, and __proto__ as an own property instead of the prototype', () => {
    const target: Record<string, unknown> = {};
    setOwn(target, 'a', 1);
    setOwn(target, '__proto__', { polluted: true });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(target)).toEqual(['a', '__proto__']);
    expect(JSON.parse(JSON.stringify(target))).toEqual(JSON.parse('{"a":1,"__proto__":{"polluted":true}}'));
    setOwn(target, '__proto__', 2);
    expect(Object.getOwnPropertyDescriptor(target, '__proto__')).toEqual({
      value: 2,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });
});
