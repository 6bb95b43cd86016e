import { describe, expect } from 'vitest';
import { contractCase } from './contract-case.js';
import type { StorageAdapter } from '../adapters/types.js';
import { Engine } from '../engine/engine.js';

/** Options of {@link describeStorageContract}. */
export interface StorageContractOptions {
  /** Name shown in the test report. */
  name: string;
  /** Makes a fresh, empty adapter; called once per test. */
  create(): StorageAdapter | Promise<StorageAdapter>;
  /** Cleans up after each test. */
  dispose?(adapter: StorageAdapter): void | Promise<void>;
  /** Tests to skip, each with the reason. */
  skip?: { reason: string; tests: string[] }[];
}

/**
 * The contract every storage adapter must pass: run it with one call from a vitest file.
 * @example
 * ```ts
 * import { describeStorageContract } from 'stepwire/testing';
 * describeStorageContract({ name: 'memory', create: () => new MemoryStorage() });
 * ```
 */
export function describeStorageContract(options: StorageContractOptions): void {
  const test = contractCase<StorageAdapter>(
    () => options.create(),
    options.dispose?.bind(options),
    options.skip,
  );

  describe(`storage contract: ${options.name}`, () => {
    test('puts, gets, lists by key order and deletes', async (storage) => {
      expect(await storage.get('workflows', 'b')).toBeUndefined();
      expect(await storage.put('workflows', 'b', { n: 2 })).toBe(true);
      expect(await storage.put('workflows', 'a', { n: 1 })).toBe(true);
      expect(await storage.get('workflows', 'b')).toEqual({ n: 2 });
      expect(await storage.list('workflows')).toEqual([
        { key: 'a', value: { n: 1 } },
        { key: 'b', value: { n: 2 } },
      ]);
      expect(await storage.delete('workflows', 'a')).toBe(true);
      expect(await storage.delete('workflows', 'a')).toBe(false);
      expect(await storage.list('workflows')).toEqual([{ key: 'b', value: { n: 2 } }]);
    });

    test('keeps collections apart', async (storage) => {
      await storage.put('entities', 'x', 1);
      expect(await storage.get('workflows', 'x')).toBeUndefined();
      expect(await storage.list('scripts')).toEqual([]);
    });

    test('ifAbsent refuses to overwrite', async (storage) => {
      expect(await storage.put('entities', 'x', { v: 1 }, { ifAbsent: true })).toBe(true);
      expect(await storage.put('entities', 'x', { v: 2 }, { ifAbsent: true })).toBe(false);
      expect(await storage.get('entities', 'x')).toEqual({ v: 1 });
    });

    test('hands out copies: changing a value read or written changes nothing stored', async (storage) => {
      const value = { list: [1, 2] };
      await storage.put('runs', 'r', value);
      value.list.push(3);
      const read = await storage.get<{ list: number[] }>('runs', 'r');
      read!.list.push(4);
      expect(await storage.get('runs', 'r')).toEqual({ list: [1, 2] });
    });

    test('round-trips JSON values of every kind, and keys with any characters', async (storage) => {
      const value = { s: 'é ∑ 😀', n: -1.5, b: false, z: null, a: [{}], nested: { deep: ['x'] } };
      await storage.put('applications', 'a key/with ?odd: chars', value);
      expect(await storage.get('applications', 'a key/with ?odd: chars')).toEqual(value);
    });

    test('through the engine: definitions survive a new engine on the same storage', async (storage) => {
      const first = new Engine({ storage });
      await first.workflows.create({
        name: 'w',
        steps: [
          {
            name: 's',
            type: 'l2',
            l2_data: { provider: 'platform', module: 'dummy', action: 'dummy_task', input_data: { a: 1 } },
          },
        ],
        wires: [],
      });
      const second = new Engine({ storage });
      const run = await second.run('w');
      expect(run.output).toEqual({ s: { a: 1 } });
      expect((await second.getRun(run.id)).status).toBe('succeeded');
    });
  });
}
