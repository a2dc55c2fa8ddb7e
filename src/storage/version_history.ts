// Versions by commit timestamp: what every key of every space held before each commit of the last
// minutes, so that a read can see the store as of an earlier cluster time (a snapshot read, a
// transaction's snapshot). LMDB keeps only the latest version; this keeps the ones it replaced.
//
// A commit adds one record: its timestamp and, for each key it changed, the value the key held
// before it (absent for a key the commit created). The value of a key at time T is then the
// "before" of the first commit after T that changed it, or the current value when none did.
// A commit only appends its record. The per-key index that reads need (each key's versions, each
// space's changed keys in commit order) is built from the log when a reader first asks, and kept
// up from there: writes pay for no index while nobody reads a snapshot, and each record is
// indexed once however many readers there are.
// Records are kept in commit order, for `windowMs` of wall-clock time and for as long as a reader
// pinned at an older time needs them, within `maxBytes` of kept values; reads older than what is
// kept are refused (`coveredAfter`). Kept in memory only: after a restart, history starts again
// from the node's clock at startup.

// A key changed twice in one commit has two changes, in the order they were made: the first one's
// `before` is the key's value before the commit, and readers take the first.
export interface KeyChange {
  space: string;
  key: Buffer;
  before: Buffer | undefined;
}

export interface CommitRecord {
  seq: number;
  ts: bigint;
  // When the commit became part of the member's history: its oplog entry's time, later than `ts`
  // for a prepared transaction's commit logged behind newer entries (WiredTiger's durable
  // timestamp). Reads see the commit from `ts`; a rollback to before `durable` undoes it.
  durable: bigint;
  wallMs: number;
  bytes: number;
  changes: readonly KeyChange[];
}

// What units without a time changed after the commit at `after` (or after `covered`, before any).
export interface UnrecordedChange {
  after: bigint;
  spaces: ReadonlySet<string>;
  mainKeys: readonly Buffer[];
}

interface Version {
  ts: bigint;
  before: Buffer | undefined;
}

interface SpaceChange {
  ts: bigint;
  key: Buffer;
}

export interface HistoryLimits {
  windowMs: number;
  maxBytes: number;
}

// What a change costs beyond its bytes: its record in the log and in the index.
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
  // The index, built up to the record with this sequence number.
  private indexedSeq = 0;
  private readonly versions = new Map<string, Version[]>();
  private readonly bySpace = new Map<string, SpaceChange[]>();
  private unrecordedChanges: UnrecordedChange[] = [];

  constructor(startTs: bigint, private readonly limits: HistoryLimits, private readonly now: () => number) {
    this.covered = startTs;
  }

  // The earliest time a read may ask for: every commit after it is kept.
  get coveredAfter(): bigint {
    return this.covered;
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  // Records a commit at `ts`; `retract` takes it back if the transaction that made it aborts
  // after all. Commits come in time order, but for a prepared transaction's: it commits at a time
  // its coordinator chose, which later commits on this node may have passed. None of them changed
  // its keys (it held them from its prepare on), so its record only has to find its place in the
  // log and in each list of the index; a commit at or before what is kept needs no record, though
  // nothing before its `durable` can then be restored.
  add(ts: bigint, changes: readonly KeyChange[], durable: bigint = ts): CommitRecord {
    let bytes = 0;
    for (const c of changes) bytes += OVERHEAD_BYTES + c.key.length + (c.before?.length ?? 0);
    const record: CommitRecord = { seq: this.nextSeq++, ts, durable: durable > ts ? durable : ts, wallMs: this.now(), bytes, changes };
    const last = this.log.length > this.head ? this.log[this.log.length - 1]! : undefined;
    if (last !== undefined && last.ts > ts) {
      if (ts <= this.covered) {
        if (record.durable > this.covered) this.covered = record.durable;
        return record;
      }
      this.addOutOfOrder(record);
    } else {
      this.log.push(record);
    }
    this.bytes += bytes;
    this.trim();
    return record;
  }

  private addOutOfOrder(record: CommitRecord): void {
    this.catchUp();
    this.log.splice(this.head + firstAfter(this.log.slice(this.head), record.ts), 0, record);
    for (const c of record.changes) {
      const id = changeId(c.space, c.key);
      const list = this.versions.get(id) ?? [];
      list.splice(firstAfter(list, record.ts), 0, { ts: record.ts, before: c.before });
      this.versions.set(id, list);
      const spaceList = this.bySpace.get(c.space) ?? [];
      spaceList.splice(firstAfter(spaceList, record.ts), 0, { ts: record.ts, key: c.key });
      this.bySpace.set(c.space, spaceList);
    }
    this.indexedSeq = record.seq;
  }

  retract(record: CommitRecord): void {
    const at = this.log.indexOf(record, this.head);
    if (at < 0) return;
    this.log.splice(at, 1);
    this.bytes -= record.bytes;
    if (record.seq > this.indexedSeq) return;
    for (const c of record.changes) {
      const id = changeId(c.space, c.key);
      const list = this.versions.get(id);
      const i = list?.findIndex((v) => v.ts === record.ts) ?? -1;
      if (i >= 0) list!.splice(i, 1);
      if (list?.length === 0) this.versions.delete(id);
      const spaceList = this.bySpace.get(c.space);
      const j = spaceList?.findIndex((s) => s.ts === record.ts && s.key === c.key) ?? -1;
      if (j >= 0) spaceList!.splice(j, 1);
    }
  }

  // A unit without a time committed these changes, after every record so far.
  unrecorded(changes: readonly KeyChange[], mainSpace: string): void {
    const spaces = new Set<string>();
    const mainKeys: Buffer[] = [];
    for (const c of changes) {
      if (c.space === mainSpace) mainKeys.push(c.key);
      else spaces.add(c.space);
    }
    const last = this.log.length > this.head ? this.log[this.log.length - 1]!.ts : this.covered;
    this.unrecordedChanges.push({ after: last, spaces, mainKeys });
  }

  // The changes of units without a time that committed after the commit at `at` (or later).
  unrecordedSince(at: bigint): UnrecordedChange[] {
    return this.unrecordedChanges.filter((u) => u.after >= at);
  }

  // Every key commits after `at` changed, once, with the value it held at `at` (undefined: absent).
  // A commit visible at `at` but durable only after it (a prepared transaction's) is undone too:
  // its keys take their values from before it, which no other commit changed while it was
  // prepared. The caller has checked that the history reaches back to `at`.
  valuesAt(at: bigint): KeyChange[] {
    const seen = new Set<string>();
    const out: KeyChange[] = [];
    const take = (record: CommitRecord): void => {
      for (const c of record.changes) {
        const id = changeId(c.space, c.key);
        if (seen.has(id)) continue;
        seen.add(id);
        out.push(c);
      }
    };
    const after = this.head + firstAfter(this.log.slice(this.head), at);
    for (let i = this.head; i < after; i++) if (this.log[i]!.durable > at) take(this.log[i]!);
    for (let i = after; i < this.log.length; i++) take(this.log[i]!);
    return out;
  }

  // The store went back to its state at `at` (a rollback's restore): the commits after it never
  // happened, and their records go. The index is built again from the log when next read; a view
  // that cached the keys changed after its time sees the sequence move and reads them again.
  truncateAfter(at: bigint): void {
    const keep = this.head + firstAfter(this.log.slice(this.head), at);
    const kept: CommitRecord[] = [];
    for (const [i, record] of this.log.entries()) {
      if (i < this.head) continue;
      if (i < keep && record.durable <= at) kept.push(record);
      else this.bytes -= record.bytes;
    }
    this.log = kept;
    this.head = 0;
    this.versions.clear();
    this.bySpace.clear();
    this.indexedSeq = 0;
    this.nextSeq += 1;
  }

  // The value the key (its changeId) held at `at`, given its latest value.
  valueAt(id: string, at: bigint, latest: Buffer | undefined): Buffer | undefined {
    this.catchUp();
    const list = this.versions.get(id);
    if (list === undefined) return latest;
    const i = firstAfter(list, at);
    return i < list.length ? list[i]!.before : latest;
  }

  // Whether a commit after `at` changed the key.
  changedAfter(id: string, at: bigint): boolean {
    this.catchUp();
    const list = this.versions.get(id);
    return list !== undefined && list.length > 0 && list[list.length - 1]!.ts > at;
  }

  // The keys of `space` that commits after `at` changed (unsorted, a key once per change).
  keysChangedAfter(space: string, at: bigint): Buffer[] {
    this.catchUp();
    const list = this.bySpace.get(space);
    if (list === undefined) return [];
    return list.slice(firstAfter(list, at)).map((c) => c.key);
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

  private catchUp(): void {
    if (this.indexedSeq === this.lastSeq) return;
    let i = this.log.length;
    while (i > this.head && this.log[i - 1]!.seq > this.indexedSeq) i--;
    for (; i < this.log.length; i++) {
      const record = this.log[i]!;
      for (const c of record.changes) {
        const id = changeId(c.space, c.key);
        const list = this.versions.get(id);
        if (list === undefined) this.versions.set(id, [{ ts: record.ts, before: c.before }]);
        else list.push({ ts: record.ts, before: c.before });
        const spaceList = this.bySpace.get(c.space);
        if (spaceList === undefined) this.bySpace.set(c.space, [{ ts: record.ts, key: c.key }]);
        else spaceList.push({ ts: record.ts, key: c.key });
      }
    }
    this.indexedSeq = this.lastSeq;
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
      // Out of the window once `windowMs` have passed (at once for a window of 0).
      const expired = record.wallMs <= horizon && (pinned === undefined || record.ts <= pinned);
      if (!overBudget && !expired) break;
      this.drop(record);
    }
    if (this.head > 1024 && this.head * 2 > this.log.length) {
      this.log = this.log.slice(this.head);
      this.head = 0;
    }
  }

  // The oldest record goes, and with it its entries at the front of the index's lists.
  private drop(record: CommitRecord): void {
    this.head += 1;
    this.bytes -= record.bytes;
    if (record.durable > this.covered) this.covered = record.durable;
    while (this.unrecordedChanges.length > 0 && this.unrecordedChanges[0]!.after < this.covered) this.unrecordedChanges.shift();
    if (record.seq > this.indexedSeq) return;
    for (const c of record.changes) {
      const id = changeId(c.space, c.key);
      const list = this.versions.get(id);
      if (list !== undefined && list[0]?.ts === record.ts) list.shift();
      if (list?.length === 0) this.versions.delete(id);
      const spaceList = this.bySpace.get(c.space);
      if (spaceList !== undefined && spaceList[0]?.ts === record.ts) spaceList.shift();
      if (spaceList?.length === 0) this.bySpace.delete(c.space);
    }
  }
}

// The first entry with a time after `at` (entries in time order).
function firstAfter(list: readonly { ts: bigint }[], at: bigint): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.ts <= at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
