/**
 * Exclusive write locks on files, within one process and across processes.
 * @module
 */
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
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
 * order. Across processes, the lock is the file `<path>.lock` holding the owner's pid and a token of
 * its own, created atomically (a hard link of a complete temporary file, so it is never seen empty);
 * a lock whose process no longer runs is taken over, by one waiter at a time. Waits up to
 * `timeoutMs`, then throws {@link FileLockTimeout}.
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
    const own = `${process.pid}\n${randomBytes(8).toString('hex')}\n`;
    await acquire(lockPath, own, timeoutMs, signal);
    try {
      return await work();
    } finally {
      // Only its own lock: one taken over by mistake (a reused pid) is another's now.
      await removeIfSame(lockPath, own);
    }
  });
}

async function acquire(
  lockPath: string,
  own: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    signal?.throwIfAborted();
    if (await create(lockPath, own)) return;
    const found = await readFile(lockPath, 'utf8').catch(() => undefined);
    if (found === undefined) continue;
    const holder = pidOf(found);
    // The holder died without unlocking (killed): its write never renamed, so the file is whole. The
    // lock is tried again at once only when this waiter removed it; else it waits like the others.
    if (holder !== undefined && !isRunning(holder) && (await takeOver(lockPath, found))) continue;
    if (Date.now() >= deadline) throw new FileLockTimeout(lockPath, holder);
    await sleep(wait, undefined, signal ? { signal } : undefined);
  }
}

/** Creates `file` holding `content`, or returns false when it exists. */
async function create(file: string, content: string): Promise<boolean> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, content);
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/**
 * Removes the lock `stale` of a process that died, unless it is gone already; true when this call
 * removed it. Waiters that found it take turns through `<lock>.takeover`, and each removes the lock
 * only while it still holds `stale` (every lock holds a token of its own): one that came late never
 * removes a live lock taken since. A turn left by a waiter that died in it is over after
 * {@link TAKEOVER_STALE_MS}.
 */
async function takeOver(lockPath: string, stale: string): Promise<boolean> {
  const turn = `${lockPath}.takeover`;
  const mine = `${process.pid}\n${randomBytes(8).toString('hex')}\n`;
  if (!(await create(turn, mine))) {
    const since = await stat(turn).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (since > TAKEOVER_STALE_MS) await unlink(turn).catch(() => undefined);
    return false;
  }
  try {
    if ((await readFile(lockPath, 'utf8').catch(() => undefined)) !== stale) return false;
    await unlink(lockPath).catch(() => undefined);
    return true;
  } finally {
    await removeIfSame(turn, mine);
  }
}

/**
 * How long a takeover turn may last before another waiter ends it (its waiter died in it): a turn
 * is a read and an unlink, so a second is long.
 */
const TAKEOVER_STALE_MS = 1_000;

async function removeIfSame(file: string, content: string): Promise<void> {
  if ((await readFile(file, 'utf8').catch(() => undefined)) === content)
    await unlink(file).catch(() => undefined);
}

function pidOf(content: string): number | undefined {
  const pid = Number.parseInt(content, 10);
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
