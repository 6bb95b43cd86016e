/**
 * Rewriting a file from its own content while other programs may edit it (a person appending a line,
 * a spreadsheet program saving): what they write between the read and the rename is not replaced.
 * @module
 */
import { constants, statSync, type BigIntStats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { replaceFile } from './atomic-write.js';

/** Points inside {@link rewriteFile} where tests edit the file as another program would. @internal */
export interface RewriteHooks {
  /** After the new content is made, before the file is checked and renamed over. */
  beforeCheck?: (path: string) => void | Promise<void>;
  /** Between the last check and the rename, synchronously: the instant no check can cover. */
  afterCheck?: (path: string) => void;
}

/** Options of {@link rewriteFile}. @internal */
export interface RewriteOptions {
  /** Checked until the rename; after it the write counts as done. */
  signal?: AbortSignal | undefined;
  /** How many times the new content is made, at most, before the file is given up on. */
  attempts: number;
  /**
   * The file is lines (CSV): bytes another program appends after a line end are rows that stay rows
   * at the end of the new content, so they are copied there rather than the content made again.
   */
  lines?: boolean;
  /** For tests only. */
  hooks?: RewriteHooks | undefined;
}

/** The file changed between the read and the rename at every attempt: nothing was written. @internal */
export class FileKeptChanging extends Error {
  constructor(
    readonly path: string,
    readonly attempts: number,
  ) {
    super(`${path} changed ${attempts} times while it was being written (another program is editing it)`);
  }
}

/**
 * Replaces the file at `path` with `make(content)` through {@link replaceFile}, keeping what other
 * programs write to it meanwhile. Run it under the file's write lock: it guards against programs that
 * do not take it. The file read stays open throughout, so its inode cannot be reused by another.
 *
 * - Right before the rename, the file at `path` must still be the one read: same device and inode
 *   (a save by rename makes a new one), same size and times (a save in place changes them). Else the
 *   content is made again from the file as it is now. An error of `make` on content that has changed
 *   since (half a saved workbook, expected cells another program changed) is not final either.
 * - With `lines`, bytes appended to the file read are no reason to start again: after the rename they
 *   are appended to the new file as they are (when the content read ended with a line end).
 * - A program that opened the file before the rename can still write into it after the check. So
 *   after the rename the file replaced is looked at once more: bytes appended to it are copied over as
 *   above; another change makes the content again from it, put in place of this write's own file
 *   unless that was changed meanwhile too (then it stays, holding this write and that change, and the
 *   change to the file replaced is lost).
 * - After `attempts` contents made, {@link FileKeptChanging} when nothing was renamed yet; else the
 *   last rename stands. Once a rename is done the write is, and errors after it are not thrown.
 *
 * Errors before the first rename pass through, the file's own open errors (`ENOENT`) among them.
 * @internal
 */
export async function rewriteFile(
  path: string,
  make: (content: Uint8Array) => Promise<Uint8Array>,
  options: RewriteOptions,
): Promise<void> {
  const { signal, attempts, hooks, lines = false } = options;
  // The file the content is made from; after a rename, the one it replaced.
  let base: FileHandle | undefined;
  // After a rename: the file it put at `path`, as it was before the rename.
  let placed: BigIntStats | undefined;
  try {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (!placed) signal?.throwIfAborted();
      base ??= await open(path, 'r');
      // Taken before reading: a change made while the bytes are read shows at the check.
      const read = await base.stat({ bigint: true });
      const content = await readAll(base, read.size);
      const expected = placed;
      const growing = lines && endsLine(content);
      let made: Uint8Array | undefined;
      try {
        made = await make(content);
        await hooks?.beforeCheck?.(path);
      } catch (error) {
        if (expected || sameFile(read, statSync(path, { bigint: true, throwIfNoEntry: false }))) throw error;
      }
      if (!expected && (!made || !(await appendedSince(base, read, content, growing)))) {
        await base.close();
        base = undefined;
        continue;
      }
      const put = await replaceFile(path, made!, expected ? undefined : signal, () => {
        const now = statSync(path, { bigint: true, throwIfNoEntry: false });
        const same = expected
          ? sameReplacement(expected, now)
          : growing
            ? sameInode(read, now) && now.size >= read.size
            : sameFile(read, now);
        if (same) hooks?.afterCheck?.(path);
        return same;
      });
      if (!put) {
        if (expected) return;
        await base.close();
        base = undefined;
        continue;
      }
      placed = put;
      if (await copyAppended(base, read, content, growing, path, attempts)) return;
    }
    if (!placed) throw new FileKeptChanging(path, attempts);
  } catch (error) {
    // After a rename the write is done: what follows it only tries to keep another program's change.
    if (!placed) throw error;
  } finally {
    await base?.close();
  }
}

/**
 * After the rename: copies to the end of `path` what was appended to the file replaced since
 * `content` was read from it, until it stops growing. False when that file changed otherwise, and
 * nothing was copied (the content is to be made again from it).
 */
async function copyAppended(
  base: FileHandle,
  read: BigIntStats,
  content: Uint8Array,
  growing: boolean,
  path: string,
  rounds: number,
): Promise<boolean> {
  let copied = 0;
  for (let round = 0; round < rounds; round++) {
    const appended = await appendedSince(base, read, content, growing);
    if (!appended) return copied > 0;
    if (appended.length === copied) return true;
    await appendTo(path, appended.subarray(copied));
    copied = appended.length;
  }
  return true;
}

/**
 * The bytes appended to the open file since `content` was read from it when its status was `read`
 * (empty when nothing was); `undefined` when it changed otherwise, or at all unless `growing`.
 */
async function appendedSince(
  base: FileHandle,
  read: BigIntStats,
  content: Uint8Array,
  growing: boolean,
): Promise<Uint8Array | undefined> {
  const now = await base.stat({ bigint: true });
  // The change time is left out: the rename over the file changes it.
  if (now.size === read.size && now.mtimeNs === read.mtimeNs) return NOTHING;
  if (!growing || now.size < BigInt(content.length)) return undefined;
  const all = await readAll(base, now.size);
  for (let i = 0; i < content.length; i++) if (all[i] !== content[i]) return undefined;
  return all.subarray(content.length);
}

const NOTHING = new Uint8Array(0);

/** Appends to the file at `path`, in place; when it was removed meanwhile, that stands. */
async function appendTo(path: string, bytes: Uint8Array): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_APPEND);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.writeFile(bytes);
  } finally {
    await handle.close();
  }
}

/** Whether text ends with a line end (or is empty), so bytes appended to it start a line of their own. */
function endsLine(content: Uint8Array): boolean {
  const last = content.at(-1);
  return last === undefined || last === 0x0a || last === 0x0d;
}

/**
 * The whole content of an open file, read from its start whatever the handle's position; `size` (as
 * the file's status said) sizes the reads, and the file may have grown since.
 */
async function readAll(handle: FileHandle, size: bigint): Promise<Uint8Array> {
  const chunkBytes = Math.min(MAX_CHUNK_BYTES, Math.max(4096, Number(size) + 1));
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const chunk = new Uint8Array(chunkBytes);
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, length);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    length += bytesRead;
  }
  if (chunks.length === 1) return chunks[0]!;
  const content = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    content.set(chunk, at);
    at += chunk.length;
  }
  return content;
}

const MAX_CHUNK_BYTES = 1 << 20;

function sameInode(before: BigIntStats, now: BigIntStats | undefined): now is BigIntStats {
  return now !== undefined && now.dev === before.dev && now.ino === before.ino;
}

/** Whether `now` is the file `before` was taken of, with nothing written to it since. */
function sameFile(before: BigIntStats, now: BigIntStats | undefined): boolean {
  return sameReplacement(before, now) && now!.ctimeNs === before.ctimeNs;
}

/**
 * Whether `now` is the file a rename put in place, as `before` was taken of it before the rename:
 * the rename changed its change time, so the size and modification time say whether it was written.
 */
function sameReplacement(before: BigIntStats, now: BigIntStats | undefined): boolean {
  return sameInode(before, now) && now.size === before.size && now.mtimeNs === before.mtimeNs;
}
