/**
 * The lock of an embedded database directory: `<dir>/stepwire.lock` holds the pid and host of the
 * process that has the directory open. Only one process may run PGlite on a directory at a time
 * (two would corrupt it), and a second open in the same process is refused alike.
 *
 * Taking the lock is an exclusive create: the content is written to a file of our own, then
 * hard-linked to `stepwire.lock`, which fails when the lock exists (so the lock never shows
 * half-written). A lock whose pid is no longer alive on this host is stale (its process was killed):
 * it is moved aside, checked to be the very file judged stale, removed, and the create is tried again.
 * A lock from another host, or from a live pid, is respected; if that pid was reused by an unrelated
 * process, remove the lock file by hand. `release` removes the lock only while it is still ours.
 * @module
 */
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StorageError } from '../../errors/storage-error.js';

/** Name of the lock file inside the database directory. @internal */
export const LOCK_FILE = 'stepwire.lock';

/** A held directory lock. @internal */
export interface DirectoryLock {
  /** The lock file. */
  readonly file: string;
  /** Removes the lock file if it is still ours. */
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
}

/**
 * Takes the lock of `dir` (an existing directory).
 * @throws {@link StorageError} `locked` naming the holder's pid when another open holds it.
 * @internal
 */
export function lockDirectory(dir: string): DirectoryLock {
  const file = join(dir, LOCK_FILE);
  const content = `${JSON.stringify({ pid: process.pid, host: hostname(), token: crypto.randomUUID() })}\n`;
  // Two rounds: a stale lock taken over, then the create again (a third process may win that race).
  for (let round = 0; round < 3; round++) {
    if (create(file, content)) return { file, release: () => removeIfSame(file, content) };
    const found = read(file);
    if (found === undefined) continue;
    const holder = parse(found);
    if (holder && alive(holder)) throw locked(dir, file, holder);
    takeOver(file, found);
  }
  const holder = parse(read(file) ?? '');
  throw locked(dir, file, holder);
}

/** Creates `file` with `content`, or returns false when it exists. */
function create(file: string, content: string): boolean {
  const own = `${file}.${process.pid}.${crypto.randomUUID()}.tmp`;
  writeFileSync(own, content);
  try {
    linkSync(own, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(own);
  }
}

/** Removes a stale lock, unless someone replaced it since it was read (then it is put back). */
function takeOver(file: string, stale: string): void {
  const aside = `${file}.${process.pid}.${crypto.randomUUID()}.stale`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (read(aside) !== stale) {
    try {
      linkSync(aside, file);
    } catch {
      // A third process took the lock meanwhile: it keeps it, the one moved aside is lost.
    }
  }
  unlinkSync(aside);
}

function removeIfSame(file: string, content: string): void {
  if (read(file) === content) unlinkSync(file);
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function parse(content: string): Holder | undefined {
  try {
    const { pid, host } = JSON.parse(content) as Partial<Holder>;
    return Number.isInteger(pid) && typeof host === 'string' ? { pid: pid!, host } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the holder may still run: its pid exists on this host, or it is on another host. */
function alive(holder: Holder): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function locked(dir: string, file: string, holder: Holder | undefined): StorageError {
  const who = !holder
    ? 'another process'
    : holder.pid === process.pid && holder.host === hostname()
      ? `this process (pid ${holder.pid}), opened twice`
      : `process ${holder.pid}${holder.host === hostname() ? '' : ` on host ${holder.host}`}`;
  return new StorageError(
    'locked',
    `the database directory "${dir}" is in use by ${who}: close it first` +
      ` (if no stepwire process with that pid runs, remove the lock file ${file})`,
    file,
    holder ? { pid: holder.pid } : {},
  );
}
