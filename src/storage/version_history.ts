// Versions by commit timestamp: what every key of every space held before each commit of the last
// minutes, so that a read can see the store as of an earlier cluster time (a snapshot read, a
// transaction's snapshot). LMDB keeps only the latest version; this keeps the ones it replaced.
//
// A commit adds one record: its timestamp and, for each key it changed, the value the key held
// before it (absent for a key the commit created). The value of a key at time T is then the
// "before" of the first commit after T that changed it, or the current value when none did.
// A commit only appends its record. The index that reads need is kept per space (each key's
// versions, the space's changed keys in commit order), built from the log when a reader first asks
// about that space and kept up from there: writes pay for no index while nobody reads a snapshot
// of their space (a resharding recipient's copy on a donor that serves its snapshot reads, say),
// and each record is indexed once per space however many readers there are.
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

// One space's index, built up to the record with sequence number `indexedSeq`: each key's versions
// (by the key's latin1 string) and the space's changes in commit order from `head` on. The
// records leaving the window advance `head` rather than shift the list: a shift copies a list as
// long as a bulk load's changes (in V8's large-object space), once per change, and held a shard's
// event loop for minutes once a million loaded documents' records expired.
interface SpaceIndex {
  indexedSeq: number;
  readonly versions: Map<string, Version[]>;
  changes: SpaceChange[];
  head: number;
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
  // The indexes of the spaces readers asked about. Records with a sequence number above a space's
  // `indexedSeq` are a suffix of the log (a record out of time order brings every index up to it).
  private readonly indexes = new Map<string, SpaceIndex>();
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
    for (const space of this.indexes.keys()) this.indexOf(space);
    this.log.splice(this.head + firstAfter(this.log.slice(this.head), record.ts), 0, record);
    for (const c of record.changes) {
      const index = this.indexes.get(c.space);
      if (index === undefined) continue;
      const id = keyId(c.key);
      const list = index.versions.get(id) ?? [];
      list.splice(firstAfter(list, record.ts), 0, { ts: record.ts, before: c.before });
      index.versions.set(id, list);
      index.changes.splice(Math.max(index.head, firstAfter(index.changes, record.ts)), 0, { ts: record.ts, key: c.key });
    }
    for (const index of this.indexes.values()) index.indexedSeq = record.seq;
  }

  retract(record: CommitRecord): void {
    const at = this.log.indexOf(record, this.head);
    if (at < 0) return;
    this.log.splice(at, 1);
    this.bytes -= record.bytes;
    for (const c of record.changes) {
      const index = this.indexes.get(c.space);
      if (index === undefined || record.seq > index.indexedSeq) continue;
      const id = keyId(c.key);
      const list = index.versions.get(id);
      const i = list?.findIndex((v) => v.ts === record.ts) ?? -1;
      if (i >= 0) list!.splice(i, 1);
      if (list?.length === 0) index.versions.delete(id);
      const j = index.changes.findIndex((s, k) => k >= index.head && s.ts === record.ts && s.key === c.key);
      if (j >= 0) index.changes.splice(j, 1);
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
    this.indexes.clear();
    this.nextSeq += 1;
  }

  // The value the key of `space` held at `at`, given its latest value.
  valueAt(space: string, key: Buffer, at: bigint, latest: Buffer | undefined): Buffer | undefined {
    const list = this.indexOf(space).versions.get(keyId(key));
    if (list === undefined) return latest;
    const i = firstAfter(list, at);
    return i < list.length ? list[i]!.before : latest;
  }

  // Whether a commit after `at` changed the key of `space`.
  changedAfter(space: string, key: Buffer, at: bigint): boolean {
    const list = this.indexOf(space).versions.get(keyId(key));
    return list !== undefined && list.length > 0 && list[list.length - 1]!.ts > at;
  }

  // The keys of `space` that commits after `at` changed (unsorted, a key once per change).
  keysChangedAfter(space: string, at: bigint): Buffer[] {
    const { changes, head } = this.indexOf(space);
    return changes.slice(Math.max(head, firstAfter(changes, at))).map((c) => c.key);
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

  // The space's index, brought up to the last record.
  private indexOf(space: string): SpaceIndex {
    let index = this.indexes.get(space);
    if (index === undefined) this.indexes.set(space, (index = { indexedSeq: 0, versions: new Map(), changes: [], head: 0 }));
    if (index.indexedSeq === this.lastSeq) return index;
    let i = this.log.length;
    while (i > this.head && this.log[i - 1]!.seq > index.indexedSeq) i--;
    for (; i < this.log.length; i++) {
      const record = this.log[i]!;
      for (const c of record.changes) {
        if (c.space !== space) continue;
        const id = keyId(c.key);
        const list = index.versions.get(id);
        if (list === undefined) index.versions.set(id, [{ ts: record.ts, before: c.before }]);
        else list.push({ ts: record.ts, before: c.before });
        index.changes.push({ ts: record.ts, key: c.key });
      }
    }
    index.indexedSeq = this.lastSeq;
    return index;
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

  // The oldest record goes, and with it its entries at the front of the indexes' lists.
  private drop(record: CommitRecord): void {
    this.head += 1;
    this.bytes -= record.bytes;
    if (record.durable > this.covered) this.covered = record.durable;
    while (this.unrecordedChanges.length > 0 && this.unrecordedChanges[0]!.after < this.covered) this.unrecordedChanges.shift();
    for (const c of record.changes) {
      const index = this.indexes.get(c.space);
      if (index === undefined || record.seq > index.indexedSeq) continue;
      const id = keyId(c.key);
      const list = index.versions.get(id);
      // Versions no reader can ask for any more (at or before `covered`) go once they are half the
      // list: reads skip them meanwhile, and a hot key's list is not copied once per commit.
      if (list !== undefined && list[list.length >> 1]!.ts <= this.covered) {
        const stale = firstAfter(list, this.covered);
        if (stale === list.length) index.versions.delete(id);
        else list.splice(0, stale);
      }
      if (index.changes[index.head]?.ts === record.ts) index.head += 1;
    }
    for (const c of record.changes) {
      const index = this.indexes.get(c.space);
      if (index !== undefined && index.head > 1024 && index.head * 2 > index.changes.length) {
        index.changes = index.changes.slice(index.head);
        index.head = 0;
      }
    }
  }
}

function keyId(key: Buffer): string {
  return key.toString('latin1');
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
