// What a lock file says and whether it still holds, decided from its text and a liveness probe.
// The file is MongoDB's mongod.lock: the holder's pid on the first line (so `kill $(cat
// mongod.lock)` works), then, where the system tells it, the holder's start time. A pid alone is
// not an identity: a container restarted on the same volume hands the old pids out again, and the
// start time tells the new process that owns a pid from the dead one that wrote the file.

export interface LockHolder {
  pid: number;
  // Clock ticks since boot at which the process started (/proc/PID/stat), when known.
  startTicks?: string;
}

export type LockFileState =
  | { kind: 'free' } // empty: its holder released it
  | { kind: 'stale'; holder?: LockHolder } // its holder is dead, or the text is not a lock
  | { kind: 'held'; holder: LockHolder };

export function formatLockHolder(holder: LockHolder): string {
  return holder.startTicks === undefined ? `${holder.pid}\n` : `${holder.pid}\n${holder.startTicks}\n`;
}

export function parseLockHolder(text: string): LockHolder | undefined {
  const [pidLine = '', ticksLine = '', ...rest] = text.trim().split('\n').map((l) => l.trim());
  // A pid of 0 or below would name a process group to kill(2), never one process.
  if (!/^[1-9]\d{0,9}$/.test(pidLine) || rest.length > 0) return undefined;
  if (ticksLine === '') return { pid: Number(pidLine) };
  return /^\d{1,20}$/.test(ticksLine) ? { pid: Number(pidLine), startTicks: ticksLine } : undefined;
}

export function judgeLockFile(text: string, isAlive: (holder: LockHolder) => boolean): LockFileState {
  if (text.trim() === '') return { kind: 'free' };
  const holder = parseLockHolder(text);
  if (holder === undefined) return { kind: 'stale' };
  return isAlive(holder) ? { kind: 'held', holder } : { kind: 'stale', holder };
}
