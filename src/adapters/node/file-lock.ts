/**
 * Exclusive write locks on files, within one process and across processes.
 * @module
 */
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyedLock } from '../../locks/keyed-lock.js';

/** One chain per file path, shared by every adapter instance of this process. */
const IN_PROCESS = new KeyedLock();

/** Why a lock could not be taken in time: the lock file and the process holding it. @internal */
export class FileLockTimeout extends Error {
  constructor(
    readonly lockPath: string,
    readonly holder: number | undefined,
  ) {
    super(
      `${lockPath} is held by ${holder === undefined ? 'an unknown process' : `process ${holder}`}` +
        ' (delete the file if no stepwire process is writing)',
    );
  }
}

/**
 * Runs `work` while holding the write lock of `path`. In this process, callers queue per path in call
 * order. Across processes, the lock is the file `<path>.lock` holding the owner's pid, created
 * atomically (a hard link of a complete temporary file, so it is never seen empty); a lock whose
 * process no longer runs is taken over. Waits up to `timeoutMs`, then throws {@link FileLockTimeout}.
 * @internal
 */
export function withFileLock<T>(
  path: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  work: () => Promise<T>,
): Promise<T> {
  return IN_PROCESS.run([path], async () => {
    const lockPath = `${path}.lock`;
    await acquire(lockPath, timeoutMs, signal);
    try {
      return await work();
    } finally {
      await unlink(lockPath).catch(() => undefined);
    }
  });
}

async function acquire(lockPath: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const temporary = `${lockPath}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, `${process.pid}\n`);
  try {
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      signal?.throwIfAborted();
      try {
        await link(temporary, lockPath);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== 'EEXIST') throw error;
      }
      const holder = await holderOf(lockPath);
      if (holder !== undefined && !isRunning(holder)) {
        // The holder died without unlocking (killed): its write never renamed, so the file is whole.
        await unlink(lockPath).catch(() => undefined);
        continue;
      }
      if (Date.now() >= deadline) throw new FileLockTimeout(lockPath, holder);
      await sleep(wait, undefined, signal ? { signal } : undefined);
    }
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

async function holderOf(lockPath: string): Promise<number | undefined> {
  const text = await readFile(lockPath, 'utf8').catch(() => '');
  const pid = Number.parseInt(text, 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as { code?: string }).code === 'EPERM';
  }
}
