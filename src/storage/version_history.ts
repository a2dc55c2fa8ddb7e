// Versions by commit timestamp: what every key of every space held before each commit of the last
// minutes, so that a read can see the store as of an earlier cluster time (a snapshot read, a
// transaction's snapshot). LMDB keeps only the latest version; this keeps the ones it replaced.
//
// A commit adds one record: its timestamp and, for each key it changed, the value the key held
// before it (absent for a key the commit created). The value of a key at time T is then the
// "before" of the first commit after T that changed it, or the current value when none did. A
// commit only appends its record: the per-key index of the changes after T is built by each
// reader at T (snapshot_view.ts), from the records after T, so that writes pay for no index.
// Records are kept in commit order, for `windowMs` of wall-clock time and for as long as a reader
// pinned at an older time needs them, within `maxBytes` of kept values; reads older than what is
// kept are refused (`coveredAfter`). Kept in memory only: after a restart, history starts again
// from the node's clock at startup.

export interface KeyChange {
  id: string;
  space: string;
  key: Buffer;
  before: Buffer | undefined;
}

export interface CommitRecord {
  seq: number;
  ts: bigint;
  wallMs: number;
  bytes: number;
  changes: readonly KeyChange[];
}

export interface HistoryLimits {
  windowMs: number;
  maxBytes: number;
}

// What a change costs beyond its bytes: its record in the log and in the per-key index.
const OVERHEAD_BYTES = 96;

export function changeId(space: string, key: Buffer): string {
  return `${space}\u0000${key.toString('latin1')}`;
}

export class VersionHistory {
  private log: CommitRecord[] = [];
  private head = 0;
  private readonly pins = new Map<bigint, number>();
  private bytes = 0;
  private nextSeq = 1;
  // Every commit after this time is in the log.
  private covered: bigint;

  constructor(startTs: bigint, private readonly limits: HistoryLimits, private readonly now: () => number = Date.now) {
    this.covered = startTs;
  }

  // The earliest time a read may ask for: every commit after it is kept.
  get coveredAfter(): bigint {
    return this.covered;
  }

  get keptBytes(): number {
    return this.bytes;
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  // Records a commit at `ts` (later than every recorded one); the returned handle takes it back if
  // the transaction that made it aborts after all.
  add(ts: bigint, changes: readonly KeyChange[]): CommitRecord {
    let bytes = 0;
    for (const c of changes) bytes += OVERHEAD_BYTES + c.key.length + (c.before?.length ?? 0);
    const record: CommitRecord = { seq: this.nextSeq++, ts, wallMs: this.now(), bytes, changes };
    this.log.push(record);
    this.bytes += bytes;
    this.trim();
    return record;
  }

  // A reader that indexed the record keeps what it read of it: the "before" of an aborted write
  // is the value that stayed, so it still reads right.
  retract(record: CommitRecord): void {
    const at = this.log.indexOf(record, this.head);
    if (at < 0) return;
    this.log.splice(at, 1);
    this.bytes -= record.bytes;
  }

  // The records after `at` with a sequence number above `afterSeq`, oldest first: what a reader at
  // `at` has not indexed yet.
  recordsAfter(at: bigint, afterSeq: number): CommitRecord[] {
    const out: CommitRecord[] = [];
    for (let i = this.log.length - 1; i >= this.head; i--) {
      const record = this.log[i]!;
      if (record.seq <= afterSeq || record.ts <= at) break;
      out.push(record);
    }
    return out.reverse();
  }

  // A reader at `at` keeps the commits after it until it lets go.
  pin(at: bigint): () => void {
    this.pins.set(at, (this.pins.get(at) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = this.pins.get(at)! - 1;
      if (n === 0) this.pins.delete(at);
      else this.pins.set(at, n);
      this.trim();
    };
  }

  private oldestPin(): bigint | undefined {
    let oldest: bigint | undefined;
    for (const at of this.pins.keys()) if (oldest === undefined || at < oldest) oldest = at;
    return oldest;
  }

  // Drops the oldest records that are out of the window and needed by no pinned reader, and, past
  // the byte budget, the oldest whatever pins them (such a reader then gets SnapshotTooOld).
  private trim(): void {
    const horizon = this.now() - this.limits.windowMs;
    const pinned = this.oldestPin();
    while (this.head < this.log.length) {
      const record = this.log[this.head]!;
      const overBudget = this.bytes > this.limits.maxBytes;
      const expired = record.wallMs < horizon && (pinned === undefined || record.ts <= pinned);
      if (!overBudget && !expired) break;
      this.drop(record);
    }
    if (this.head > 1024 && this.head * 2 > this.log.length) {
      this.log = this.log.slice(this.head);
      this.head = 0;
    }
  }

  private drop(record: CommitRecord): void {
    this.head += 1;
    this.bytes -= record.bytes;
    this.covered = record.ts;
  }
}
