import { ErrorCodes } from '../base/error_codes.js';
import { MongoError } from '../base/errors.js';
import type { KvEntry, KvLatest, KvView, RangeOptions } from './lmdb/kv_store.js';
import type { VersionHistory } from './version_history.js';

// The store as of cluster time `at`: each key's latest value, or what it held before the first
// commit after `at` that changed it (version_history.ts). A range merges the latest keys with the
// keys commits after `at` changed, so a key deleted since is read back and one created since is
// left out. The latest values may be read from any snapshot taken after `at` (a range iterated
// over several event-loop turns keeps the one it began with): the first version after `at` still
// holds the value at `at`. The history past its byte budget drops records a view still needs: the
// view's reads from then on answer SnapshotTooOld rather than the latest values as if they were
// the values at `at`.
export class SnapshotView implements KvView {
  // Per space: the keys changed after `at`, sorted, as of the history's record `seq`.
  private readonly changed = new Map<string, { seq: number; keys: Buffer[] }>();
  private released = false;

  constructor(private readonly history: VersionHistory, readonly at: bigint, private readonly unpin: () => void) {}

  get(space: KvLatest, key: Buffer): Buffer | undefined {
    this.checkCovered();
    return this.history.valueAt(space.name, key, this.at, space.latestGet(key));
  }

  // Whether a commit after `at` changed the key (what a transaction's write conflicts with).
  changedSince(space: string, key: Buffer): boolean {
    this.checkCovered();
    return this.history.changedAfter(space, key, this.at);
  }

  *range(space: KvLatest, start: Buffer, end: Buffer, options: RangeOptions): Iterable<KvEntry> {
    const reverse = options.reverse === true;
    const changed = this.changedIn(space.name, start, end);
    if (reverse) changed.reverse();
    const base = space.latestRange(start, end, { reverse })[Symbol.iterator]();
    let left = options.limit ?? Infinity;
    let b = base.next();
    let c = 0;
    while (left > 0) {
      this.checkCovered();
      const key = changed[c];
      if (b.done === true && key === undefined) return;
      const order = b.done === true ? 1 : key === undefined ? -1 : Buffer.compare(b.value.key, key) * (reverse ? -1 : 1);
      let entry: KvEntry | undefined;
      if (order < 0) {
        const value = this.history.valueAt(space.name, b.value.key, this.at, b.value.value);
        if (value !== undefined) entry = { key: b.value.key, value };
        b = base.next();
      } else {
        const value = this.history.valueAt(space.name, key!, this.at, order === 0 ? b.value!.value : undefined);
        if (value !== undefined) entry = { key: key!, value };
        if (order === 0) b = base.next();
        c += 1;
      }
      if (entry !== undefined) {
        left -= 1;
        yield entry;
      }
    }
  }

  // Lets go of the history this view needs; reads after it are no longer guaranteed.
  release(): void {
    if (this.released) return;
    this.released = true;
    this.unpin();
  }

  private checkCovered(): void {
    if (this.at < this.history.coveredAfter) {
      throw new MongoError(ErrorCodes.SnapshotTooOld, 'the snapshot history this read needs was dropped: the history passed its byte budget');
    }
  }

  private changedIn(space: string, start: Buffer, end: Buffer): Buffer[] {
    let known = this.changed.get(space);
    if (known === undefined || known.seq !== this.history.lastSeq) {
      const keys = this.history.keysChangedAfter(space, this.at).sort(Buffer.compare);
      known = { seq: this.history.lastSeq, keys: keys.filter((k, i) => i === 0 || !k.equals(keys[i - 1]!)) };
      this.changed.set(space, known);
    }
    const from = start.length === 0 ? 0 : lowerBound(known.keys, start);
    const to = end.length === 0 ? known.keys.length : lowerBound(known.keys, end);
    return known.keys.slice(from, to);
  }
}

// The first index whose key is not below `key`.
function lowerBound(keys: readonly Buffer[], key: Buffer): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Buffer.compare(keys[mid]!, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
