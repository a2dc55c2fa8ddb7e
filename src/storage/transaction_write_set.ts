import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import type { KvEntry, KvLatest, KvSpaceWriter, KvStore, KvView, KvWriter, RangeOptions } from './lmdb/kv_store.js';
import type { SnapshotView } from './snapshot_view.js';
import { changeId } from './version_history.js';

// A multi-document transaction's own writes, kept apart from the store until it commits: every
// key it wrote, with its new value (or none, removed), over the snapshot it reads at. Read
// through it (as a KvView) a transaction sees the store as of its snapshot with its own writes on
// top; written through it (as the KvWriter of its statements' write units) nothing reaches LMDB.
//
// First writer wins, as in MongoDB: a key another open transaction wrote, or one a commit after
// this snapshot changed, refuses the write with WriteConflict. Each key written is held as an
// intent (KvStore.intents) until the transaction ends; a write outside transactions that touches
// one waits for the holder to end (an insert, update, delete or findAndModify command: the
// dispatcher runs it again), or dooms it (any other write), whose next statement or commit then
// fails with WriteConflict.
export class TransactionWriteSet implements KvView {
  private readonly own = new Map<string, Map<string, { key: Buffer; value: Buffer | undefined }>>();
  private statementUndo: (() => void)[] | undefined;
  private doomedBy: string | undefined;

  constructor(private readonly store: KvStore, readonly snapshot: SnapshotView) {
    this.ended = new Promise<void>((resolve) => (this.settleEnded = resolve));
  }

  // ---- KvView: reads of the transaction.

  get(space: KvLatest, key: Buffer): Buffer | undefined {
    const mine = this.own.get(space.name)?.get(key.toString('latin1'));
    return mine !== undefined ? mine.value : this.snapshot.get(space, key);
  }

  *range(space: KvLatest, start: Buffer, end: Buffer, options: RangeOptions): Iterable<KvEntry> {
    const reverse = options.reverse === true;
    const mine = this.ownIn(space.name, start, end);
    if (reverse) mine.reverse();
    const base = this.snapshot.range(space, start, end, { reverse })[Symbol.iterator]();
    let left = options.limit ?? Infinity;
    let b = base.next();
    let m = 0;
    while (left > 0) {
      const entry = mine[m];
      if (b.done === true && entry === undefined) return;
      const order = b.done === true ? 1 : entry === undefined ? -1 : Buffer.compare(b.value.key, entry.key) * (reverse ? -1 : 1);
      let out: KvEntry | undefined;
      if (order < 0) {
        out = b.value;
        b = base.next();
      } else {
        if (entry!.value !== undefined) out = { key: entry!.key, value: entry!.value };
        if (order === 0) b = base.next();
        m += 1;
      }
      if (out !== undefined) {
        left -= 1;
        yield out;
      }
    }
  }

  // ---- Writes: a space as the statements' write units use it.

  space(name: string): KvSpaceWriter {
    const latest = this.store.space(name);
    return {
      get: (key) => this.get(latest, key),
      peek: (key) => this.get(latest, key),
      range: (start, end, options) => this.range(latest, start, end, options ?? {}),
      put: (key, value) => this.write(latest, key, value),
      // Record ids come from the collection's allocator: never one a snapshot could hold.
      append: (key, value) => {
        this.write(latest, key, value);
        return true;
      },
      putIfAbsent: (key, value) => {
        if (this.get(latest, key) !== undefined) return false;
        this.write(latest, key, value);
        return true;
      },
      remove: (key) => {
        if (this.get(latest, key) !== undefined) this.write(latest, key, undefined);
      },
    };
  }

  // The KvWriter the statements' write units get: the main space's operations, and the others.
  readonly writer: KvWriter = (() => {
    const main = (): KvSpaceWriter => this.space(this.store.mainSpaceName);
    return {
      get: (key) => main().get(key),
      peek: (key) => main().get(key),
      range: (start, end, options) => main().range(start, end, options),
      put: (key, value) => main().put(key, value),
      append: (key, value) => main().append(key, value),
      putIfAbsent: (key, value) => main().putIfAbsent(key, value),
      remove: (key) => main().remove(key),
      space: (name) => this.space(name),
      dropSpace: () => {
        throw new MongoError(ErrorCodes.OperationNotSupportedInTransaction, 'Cannot drop a collection in a multi-document transaction.');
      },
      // A transaction's writes take their time when they commit.
      stamp: () => undefined,
      durableAt: () => undefined,
    };
  })();

  // ---- The transaction's life.

  // Runs one statement: if it throws, what it wrote is taken back and the rest of the transaction
  // stays (its caller decides whether the transaction goes on).
  statement<T>(fn: () => T): T {
    this.checkNotDoomed();
    const undo: (() => void)[] = [];
    this.statementUndo = undo;
    try {
      return fn();
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      throw err;
    } finally {
      this.statementUndo = undefined;
    }
  }

  // Settles when the transaction lets go of its keys (release), committed or aborted.
  readonly ended: Promise<void>;
  private settleEnded!: () => void;

  // Once prepared, the transaction's commit may no longer fail: its keys are held back from other
  // transactions by its intents and from writes outside transactions by their callers.
  prepared = false;

  // A write outside transactions changed a key this one holds.
  doom(id: string): void {
    if (!this.prepared) this.doomedBy ??= id;
  }

  checkNotDoomed(): void {
    if (this.doomedBy !== undefined) throw writeConflict();
  }

  // Every key this transaction wrote, by space.
  *writes(): Iterable<{ space: string; key: Buffer; value: Buffer | undefined }> {
    for (const [space, entries] of this.own) for (const { key, value } of entries.values()) yield { space, key, value };
  }

  // Before the commit applies the writes: none of them may have been changed by a commit after
  // the snapshot (a write outside transactions would have doomed it; a commit of a transaction
  // that wrote a key after this one let go of it cannot have, but is checked the same way).
  validate(): void {
    this.checkNotDoomed();
    for (const { space, key } of this.writes()) {
      if (this.snapshot.changedSince(space, key)) throw writeConflict();
    }
  }

  // Lets go of its intents and of its snapshot.
  release(): void {
    for (const { space, key } of this.writes()) {
      const id = changeId(space, key);
      if (this.store.intents.get(id) === this) this.store.intents.delete(id);
    }
    this.snapshot.release();
    this.settleEnded();
  }

  private write(space: KvLatest, key: Buffer, value: Buffer | undefined): void {
    this.checkNotDoomed();
    const id = changeId(space.name, key);
    const holder = this.store.intents.get(id);
    if (holder !== undefined && holder !== this) throw writeConflict();
    if (this.snapshot.changedSince(space.name, key)) throw writeConflict();
    let entries = this.own.get(space.name);
    if (entries === undefined) this.own.set(space.name, (entries = new Map()));
    const k = key.toString('latin1');
    const previous = entries.get(k);
    const claimed = holder === undefined;
    entries.set(k, { key: Buffer.from(key), value: value === undefined ? undefined : Buffer.from(value) });
    if (claimed) this.store.intents.set(id, this);
    this.statementUndo?.push(() => {
      if (previous === undefined) entries.delete(k);
      else entries.set(k, previous);
      if (claimed) this.store.intents.delete(id);
    });
  }

  private ownIn(space: string, start: Buffer, end: Buffer): { key: Buffer; value: Buffer | undefined }[] {
    const entries = this.own.get(space);
    if (entries === undefined) return [];
    const out = [...entries.values()].filter(({ key }) => (start.length === 0 || Buffer.compare(key, start) >= 0) && (end.length === 0 || Buffer.compare(key, end) < 0));
    return out.sort((a, b) => Buffer.compare(a.key, b.key));
  }
}

export function writeConflict(): MongoError {
  return new MongoError(ErrorCodes.WriteConflict, 'Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction.');
}
