import { describe, expect, it } from 'vitest';
import { Engine, type EngineOptions } from '../../src/index.js';

/** The message `new Engine(options)` throws with, or undefined when it accepts them. */
function refusal(options: unknown): string | undefined {
  try {
    new Engine(options as EngineOptions);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
}

describe('new Engine(options) refuses options it would ignore', () => {
  it('names a misspelled option at the top level or in security, and lists the known ones', () => {
    expect(refusal({ securty: { allowHosts: ['api.example.com'] } })).toBe(
      'securty is not a known option (known: storage, queue, spreadsheets, files, chat, mail, fetch, actions, sandbox, limits, security, access, secrets, publicUrl)',
    );
    expect(refusal({ security: { resolver: async () => ['10.0.0.1'] } })).toBe(
      'security.resolver is not a known option (known: allowHosts, resolve)',
    );
    expect(refusal({ limits: { toString: 5 } })).toMatch(/^limits\.toString is not a known limit/);
  });

  it('wants security to be an object and its resolve a function', () => {
    expect(refusal({ security: 'strict' })).toMatch(/^security must be an object/);
    expect(refusal({ security: { resolve: true } })).toMatch(/^security\.resolve must be a function/);
  });

  it('accepts every documented option, and options left undefined', () => {
    const resolve = async () => ['93.184.215.14'];
    expect(refusal({ security: { allowHosts: ['api.example.com'], resolve }, limits: {} })).toBeUndefined();
    expect(refusal({ storage: undefined, sandbox: undefined, fetch: undefined })).toBeUndefined();
  });
});
