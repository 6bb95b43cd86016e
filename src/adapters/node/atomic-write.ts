/**
 * Atomic file replacement: a reader sees the old file or the new one, never a part of either, and a
 * crash at any point leaves one of them whole.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { renameSync, type BigIntStats } from 'node:fs';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces (or creates) the file at `path` with `data`: writes a temporary file in the same folder,
 * flushes it to disk, renames it over `path`, then flushes the folder so the rename itself is durable.
 * The new file keeps the permission bits of the file it replaces. `signal` is checked until the
 * rename; after it the write counts as done. A crash can leave a `.<name>.<pid>.<random>.tmp` file
 * behind, never a half-written `path`.
 *
 * With `unchanged`, it is called right before the rename, and the rename follows it synchronously
 * (no other work of this process in between, so the gap is a system call's length); when it returns
 * false, `path` is left as it is and the temporary file removed.
 * @returns The new file's status taken before the rename (its change time is older than the rename),
 * or `undefined` when `unchanged` returned false.
 * @internal
 */
export async function replaceFile(
  path: string,
  data: Uint8Array,
  signal?: AbortSignal,
  unchanged?: () => boolean,
): Promise<BigIntStats | undefined> {
  signal?.throwIfAborted();
  const folder = dirname(path);
  const temporary = join(folder, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const mode = (await stat(path).catch(() => undefined))?.mode;
  let renamed = false;
  let written: BigIntStats;
  try {
    const handle = await open(temporary, 'wx', mode === undefined ? undefined : mode & 0o7777);
    try {
      await handle.writeFile(data, { signal });
      // `open` masks the mode with the umask; the replacement should match the original exactly.
      if (mode !== undefined) await handle.chmod(mode & 0o7777);
      await handle.sync();
      written = await handle.stat({ bigint: true });
    } finally {
      await handle.close();
    }
    signal?.throwIfAborted();
    if (!unchanged) await rename(temporary, path);
    else if (unchanged()) renameSync(temporary, path);
    else return undefined;
    renamed = true;
    await syncFolder(folder);
    return written;
  } finally {
    if (!renamed) await unlink(temporary).catch(() => undefined);
  }
}

/** Flushes a folder's entries (the rename) to disk; platforms that cannot open folders skip it. */
async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
  } catch {
    return; // Windows cannot open a folder; NTFS journals the rename itself.
  }
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems refuse fsync on a folder (EINVAL); the rename has still happened.
    if ((error as { code?: string }).code !== 'EINVAL') throw error;
  } finally {
    await handle.close();
  }
}
