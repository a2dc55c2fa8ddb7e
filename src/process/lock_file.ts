import { linkSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { formatLockHolder, judgeLockFile, type LockHolder } from './lock_file_policy.js';

// Each try either takes the lock, refuses, or finds the file changed under it (a release, or
// another process's take-over in progress), which lasts microseconds; this bounds the wait.
const ATTEMPTS_MAX = 100;
const TAKE_OVER_WAIT_MS = 10;

export class LockFileHeldError extends Error {
  constructor(readonly file: string, readonly holderPid: number) {
    super(`Unable to lock the lock file ${file}: process ${holderPid} holds it. Another docshard process is already running on the ${path.dirname(file)} directory`);
  }
}

export interface LockFile {
  // Removes the file if it is still this process's; idempotent.
  release(): void;
}

// Takes FILE for this process, or throws LockFileHeldError naming the live process that holds it.
// The file appears whole or not at all: it is written under a temporary name and hard-linked into
// place, which fails if it exists. A stale file (its holder dead) is replaced only by the process
// that holds FILE.takeover, made the same way, so two processes that both find it stale cannot
// both take it.
export async function acquireLockFile(file: string, logger: Logger): Promise<LockFile> {
  const mine = formatLockHolder(currentHolder());
  const temp = `${file}.${process.pid}.tmp`;
  // Never written in place: one left by a killed process with this pid may be linked as FILE.
  rmSync(temp, { force: true });
  writeFileSync(temp, mine);
  try {
    for (let attempt = 0; attempt < ATTEMPTS_MAX; attempt++) {
      if (tryLink(temp, file)) return ownedLock(file, mine);
      const text = readIfPresent(file);
      if (text === undefined) continue; // released since the link failed
      const state = judgeLockFile(text, holderIsAlive);
      if (state.kind === 'held') throw new LockFileHeldError(file, state.holder.pid);
      if (await replaceStale(file, text, temp)) {
        if (state.kind === 'stale') logger.warn({ c: 'STORAGE', file, stalePid: state.holder?.pid }, 'Took over a lock file its dead holder left');
        return ownedLock(file, mine);
      }
    }
  } finally {
    rmSync(temp, { force: true });
  }
  throw new Error(`Unable to lock the lock file ${file}: it kept changing`);
}

// Whether the process that wrote a lock file still lives: its pid exists, is not a zombie, and
// (where /proc tells) started when the file says it did.
function holderIsAlive(holder: LockHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: it exists under another user.
  }
  const stat = procStat(holder.pid);
  if (stat === undefined) return true; // no /proc: the pid is all there is to go on
  if (stat.state === 'Z' || stat.state === 'X') return false;
  return holder.startTicks === undefined || holder.startTicks === stat.startTicks;
}

function currentHolder(): LockHolder {
  const startTicks = procStat(process.pid)?.startTicks;
  return startTicks === undefined ? { pid: process.pid } : { pid: process.pid, startTicks };
}

function procStat(pid: number): { state: string; startTicks: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which may itself hold spaces and parentheses: state is
    // field 3 of proc(5), starttime field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [state, startTicks] = [fields[0], fields[19]];
    return state !== undefined && startTicks !== undefined ? { state, startTicks } : undefined;
  } catch {
    return undefined;
  }
}

// Replaces FILE, last read as STALE_TEXT, with TEMP while holding FILE.takeover. False when
// another process is taking it over or FILE changed since it was read: the caller looks again.
async function replaceStale(file: string, staleText: string, temp: string): Promise<boolean> {
  const guard = `${file}.takeover`;
  if (!tryLink(temp, guard)) {
    const guardText = readIfPresent(guard);
    if (guardText !== undefined && judgeLockFile(guardText, holderIsAlive).kind !== 'held') {
      // Its taker died in the middle; nothing else ever removes it.
      removeIfUnchanged(guard, guardText);
    } else {
      await sleep(TAKE_OVER_WAIT_MS);
    }
    return false;
  }
  try {
    if (readIfPresent(file) !== staleText) return false;
    renameSync(temp, file);
    return true;
  } finally {
    unlinkSync(guard);
  }
}

function ownedLock(file: string, mine: string): LockFile {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      removeIfUnchanged(file, mine);
    },
  };
}

function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function readIfPresent(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function removeIfUnchanged(file: string, text: string): void {
  if (readIfPresent(file) === text) rmSync(file, { force: true });
}
