/**
 * Create-or-replace on a storage adapter that tells which it was, also when several callers store
 * the same new key at once: exactly one of them created it.
 * @module
 */
import type { Collection, StorageAdapter } from './types.js';

/**
 * Stores `value` under `key`: first as an insert that only a missing key takes (true: created), else
 * as a replace, after `beforeReplace` has seen the value it replaces (it may throw to refuse).
 * @internal
 */
export async function createOrReplace<T>(
  storage: StorageAdapter,
  collection: Collection,
  key: string,
  value: T,
  beforeReplace?: (previous: T) => void | Promise<void>,
): Promise<boolean> {
  if (await storage.put(collection, key, value, { ifAbsent: true })) return true;
  if (beforeReplace) {
    const previous = await storage.get<T>(collection, key);
    if (previous !== undefined) await beforeReplace(previous);
  }
  await storage.put(collection, key, value);
  return false;
}
