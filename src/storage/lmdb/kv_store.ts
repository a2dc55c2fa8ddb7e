import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import { changeId, type KeyChange, type VersionHistory } from '../version_history.js';

// The only file that touches lmdb. Everything above sees ordered byte-keyed stores ("spaces",
// one LMDB database each) with synchronous atomic write units spanning all of them: a write
// unit's commit is in the data file when writeSync returns (it survives kill -9 of the process);
// `flushed` additionally waits for fsync.
export interface KvEntry {
  key: Buffer;
  value: Buffer;
}

export interface RangeOptions {
  reverse?: boolean;
  limit?: number;
}

export interface KvSpaceReader {
  get(key: Buffer): Buffer | undefined;
  // The value without a copy of its own: a view of lmdb-js's read buffer, overwritten by the next
  // read of the store. For a caller that copies the bytes at once (a clone batch).
  peek(key: Buffer): Buffer | undefined;
  // [start, end) in forward order (an empty start or end is unbounded); with reverse, iterates
  // from just below `end` down to `start`.
  range(start: Buffer, end: Buffer, options?: RangeOptions): Iterable<KvEntry>;
}

export interface KvSpaceWriter extends KvSpaceReader {
  put(key: Buffer, value: Buffer): void;
  // Writes only when `key` is greater than every key of the space; false (and nothing written)
  // otherwise. LMDB then finds the place without a search and fills pages instead of splitting
  // them in half: the cheap way to add ever-increasing keys (record ids), and a uniqueness check
  // for free.
  append(key: Buffer, value: Buffer): boolean;
  // Writes only when `key` is absent; false (and nothing written) when it is there already.
  putIfAbsent(key: Buffer, value: Buffer): boolean;
  remove(key: Buffer): void;
}

// The main space (catalog and counters) plus the other spaces by name. A space is created on first
// use; `dropSpace` deletes it with everything in it, as part of the write unit.
export interface KvReader extends KvSpaceReader {
  space(name: string): KvSpaceReader;
}

export interface KvWriter extends KvSpaceWriter {
  space(name: string): KvSpaceWriter;
  dropSpace(name: string): void;
  // The commit time of what this unit writes (version_history.ts), once it has one.
  stamp(ts: bigint): void;
  // The later time the unit's oplog entry takes, when it commits at an earlier time (a prepared
  // transaction's commit, logged behind newer entries): a rollback to before it undoes the unit.
  durableAt(ts: bigint): void;
}

// A space's latest committed values (or, inside a write unit, the unit's own), whatever view is
// active: what a view reads underneath.
export interface KvLatest {
  readonly name: string;
  latestGet(key: Buffer): Buffer | undefined;
  latestRange(start: Buffer, end: Buffer, options?: RangeOptions): Iterable<KvEntry>;
}

// A way of reading the store other than its latest state (a snapshot at an earlier time, a
// transaction's own writes over one): while one is active (KvStore.withView), every read of
// every space outside a write unit goes through it.
export interface KvView {
  get(space: KvLatest, key: Buffer): Buffer | undefined;
  range(space: KvLatest, start: Buffer, end: Buffer, options: RangeOptions): Iterable<KvEntry>;
}

interface Level {
  undo: (() => void)[];
  changes: KeyChange[] | undefined;
  stamp: bigint | undefined;
  durable: bigint | undefined;
}

const NO_OVERWRITE = { noOverwrite: true } as const;
const APPEND = { append: true } as const;

// The longest key lmdb-js stores (its build of LMDB raises MDB_MAXKEYSIZE to this). Longer keys
// are refused by put; reads and ranges given one answer as if the store could hold it.
export const MAX_KEY_BYTES = 1978;
const MAIN = 'docshard';
// LMDB sizes some per-transaction arrays by this; one space per collection and one per index.
const MAX_SPACES = 10_000;

// With binary encoding lmdb-js hands out a fresh copy of each key and value (a slice of its
// read buffer), never its reused buffer itself: it can be kept as it is, without copying again.
function ownBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

class Space implements KvSpaceWriter, KvLatest {
  // Opened on first use. LMDB closes a handle that the aborted transaction created or dropped, so
  // after an abort those are forgotten and opened again by name.
  private db: Database<Buffer, Buffer> | undefined;

  constructor(private readonly store: KvStore, readonly name: string) {}

  handle(): Database<Buffer, Buffer> {
    return (this.db ??= this.store.openHandle(this));
  }

  forget(): void {
    this.db = undefined;
  }

  get(key: Buffer): Buffer | undefined {
    const view = this.store.activeView;
    return view === undefined ? this.latestGet(key) : view.get(this, key);
  }

  latestGet(key: Buffer): Buffer | undefined {
    if (key.length > MAX_KEY_BYTES) return undefined;
    const value = this.handle().get(key, this.store.reading());
    return value === undefined ? undefined : ownBuffer(value);
  }

  // lmdb-js's getBinaryFast takes the read transaction too, though its typings leave it out. Its
  // buffer has a `length` property set to the value's size over a larger typed array, which
  // native copies ignore: the view returned has the value's size as its own.
  peek(key: Buffer): Buffer | undefined {
    const view = this.store.activeView;
    if (view !== undefined) return view.get(this, key);
    if (key.length > MAX_KEY_BYTES) return undefined;
    const db = this.handle() as unknown as { getBinaryFast(key: Buffer, options: { transaction?: Transaction }): Buffer | undefined };
    const value = db.getBinaryFast(key, this.store.reading());
    return value?.subarray(0, value.length);
  }

  // The view is the one active when the range is asked for, not when it is iterated: a cursor
  // keeps reading the snapshot it began in.
  range(start: Buffer, end: Buffer, options: RangeOptions = {}): Iterable<KvEntry> {
    const view = this.store.activeView;
    return view === undefined ? this.latestRange(start, end, options) : view.range(this, start, end, options);
  }

  *latestRange(start: Buffer, end: Buffer, options: RangeOptions = {}): Iterable<KvEntry> {
    // A bound longer than any key is cut to MAX_KEY_BYTES. The cut is below the bound, and the
    // only key that can lie between them is the cut itself (it is a prefix of the bound; any
    // other stored key differs from both in a byte within the cut): an end bound then takes the
    // cut in, a start bound leaves it out.
    const longStart = start.length > MAX_KEY_BYTES;
    const longEnd = end.length > MAX_KEY_BYTES;
    const from = start.length === 0 ? undefined : longStart ? start.subarray(0, MAX_KEY_BYTES) : start;
    const to = end.length === 0 ? undefined : longEnd ? end.subarray(0, MAX_KEY_BYTES) : end;
    const limit = longStart ? undefined : options.limit;
    const spec = options.reverse
      ? { start: to, end: from, reverse: true, limit, exclusiveStart: to !== undefined && !longEnd, inclusiveEnd: true }
      : { start: from, end: to, limit, inclusiveEnd: longEnd };
    let left = options.limit ?? Infinity;
    for (const { key, value } of this.handle().getRange(spec)) {
      if (longStart && key.length === MAX_KEY_BYTES && Buffer.compare(key, start) < 0) continue;
      if (left-- <= 0) return;
      yield { key: ownBuffer(key), value: ownBuffer(value) };
    }
  }

  put(key: Buffer, value: Buffer): void {
    if (this.store.intents.size > 0) this.store.touchIntent(this.name, key);
    if (this.store.keepsHistory()) this.store.changing(this.name, key, this.latestGet(key));
    this.handle().putSync(key, value);
  }

  // putSync returns whether it wrote (lmdb's README), though its typings say void.
  append(key: Buffer, value: Buffer): boolean {
    const wrote = this.handle().putSync(key, value, APPEND) as unknown as boolean;
    if (wrote && this.store.intents.size > 0) this.store.touchIntent(this.name, key);
    if (wrote && this.store.keepsHistory()) this.store.changing(this.name, key, undefined);
    return wrote;
  }

  putIfAbsent(key: Buffer, value: Buffer): boolean {
    const wrote = this.handle().putSync(key, value, NO_OVERWRITE) as unknown as boolean;
    if (wrote && this.store.intents.size > 0) this.store.touchIntent(this.name, key);
    if (wrote && this.store.keepsHistory()) this.store.changing(this.name, key, undefined);
    return wrote;
  }

  remove(key: Buffer): void {
    if (this.store.intents.size > 0) this.store.touchIntent(this.name, key);
    if (this.store.keepsHistory()) {
      const before = this.latestGet(key);
      if (before !== undefined) this.store.changing(this.name, key, before);
    }
    this.handle().removeSync(key);
  }
}

// A transaction holding keys a write touches (transaction_write_set.ts).
export interface IntentHolder {
  doom(id: string): void;
  readonly prepared: boolean;
  // Settles when the transaction commits or aborts.
  readonly ended: Promise<void>;
}

// A write met a key an open transaction holds: it is to run again once `ended` settles, as
// MongoDB's writes wait out a transaction's write conflict rather than fail.
export class WriteWaitsForTransaction extends Error {
  constructor(readonly ended: Promise<void>) {
    super('a write is waiting for a transaction that holds a key it writes');
  }
}

export class KvStore implements KvReader {
  private readonly root: RootDatabase;
  private readonly spaces = new Map<string, Space>();
  private readonly main: Space;
  private readonly writer: KvWriter;
  // One level per open transaction, innermost last. `undo`: what to undo in memory if the
  // transaction aborts, as MongoDB's RecoveryUnit::onRollback; a nested transaction that commits
  // hands its undo to the enclosing one, whose abort undoes the child's commit too. `changes`:
  // the value each key it changed held before it, for the version history.
  private readonly levels: Level[] = [];
  private history: VersionHistory | undefined;
  activeView: KvView | undefined;
  // Keys open transactions wrote, by changeId, each with the transaction that holds it
  // (transaction_write_set.ts). A write here that touches one dooms the holder, or, inside
  // `waitingForTransactions`, gives way to it (WriteWaitsForTransaction).
  readonly intents = new Map<string, IntentHolder>();
  private waitForHolders = false;
  readonly mainSpaceName = MAIN;

  private constructor(path: string) {
    this.root = open({ path, keyEncoding: 'binary', encoding: 'binary', mapSize: 2 ** 36, maxDbs: MAX_SPACES, compression: false });
    this.main = this.space(MAIN);
    const main = this.main;
    this.writer = {
      get: (key) => main.get(key),
      peek: (key) => main.peek(key),
      range: (start, end, options) => main.range(start, end, options),
      put: (key, value) => main.put(key, value),
      append: (key, value) => main.append(key, value),
      putIfAbsent: (key, value) => main.putIfAbsent(key, value),
      remove: (key) => main.remove(key),
      space: (name) => this.space(name),
      dropSpace: (name) => this.dropSpace(name),
      stamp: (ts) => this.stamp(ts),
      durableAt: (ts) => this.durableAt(ts),
    };
  }

  static open(path: string): KvStore {
    return new KvStore(path);
  }

  space(name: string): Space {
    let space = this.spaces.get(name);
    if (space === undefined) this.spaces.set(name, (space = new Space(this, name)));
    return space;
  }

  // Creates the database when it is missing: inside a write unit as part of it, otherwise in a
  // transaction of its own.
  openHandle(space: Space): Database<Buffer, Buffer> {
    // lmdb-js's openDB commits its current read transaction when it is done. Inside a write
    // transaction nothing has retired that one yet, and a range iterator suspended between event
    // loop turns (a cursor's getMore) may still be reading through it: it would fail with
    // MDB_BAD_TXN. resetReadTxn retires a read transaction that iterators still hold (they keep
    // it) and leaves openDB nothing to commit.
    (this.root as unknown as { resetReadTxn(): void }).resetReadTxn();
    const db = this.root.openDB<Buffer, Buffer>({ name: space.name, keyEncoding: 'binary', encoding: 'binary' });
    // A read transaction begun before the handle existed cannot use it.
    this.endReading();
    // LMDB closes a handle that an aborted transaction created: forgotten, to be opened again.
    this.onRollback(() => space.forget());
    return db;
  }

  private dropSpace(name: string): void {
    const space = this.space(name);
    space.handle().dropSync();
    space.forget();
    this.spaces.delete(name);
  }

  // Registers an in-memory change's undo with the innermost open transaction (none outside one).
  onRollback(undo: () => void): void {
    this.levels.at(-1)?.undo.push(undo);
  }

  // From now on every stamped commit records what it replaced (version_history.ts).
  keepHistory(history: VersionHistory): void {
    this.history = history;
  }

  touchIntent(space: string, key: Buffer): void {
    const id = changeId(space, key);
    const holder = this.intents.get(id);
    if (holder === undefined) return;
    if (this.waitForHolders && !holder.prepared) throw new WriteWaitsForTransaction(holder.ended);
    holder.doom(id);
  }

  // Runs `fn`, a write that gives way to the open transactions whose keys it touches: it throws
  // WriteWaitsForTransaction, its write transaction aborts, and its caller runs it again once the
  // holder ended. For writes that are one write unit, which can run again as if never begun.
  waitingForTransactions<T>(fn: () => T): T {
    const previous = this.waitForHolders;
    this.waitForHolders = true;
    try {
      return fn();
    } finally {
      this.waitForHolders = previous;
    }
  }

  keepsHistory(): boolean {
    return this.history !== undefined && this.levels.length > 0;
  }

  // A change of a key in the innermost transaction, with what the key held before it, in the order
  // the changes are made (a key changed twice keeps both; readers take the first).
  changing(space: string, key: Buffer, before: Buffer | undefined): void {
    const level = this.levels.at(-1)!;
    (level.changes ??= []).push({ space, key: Buffer.from(key), before });
  }

  // The transaction's changes commit at `ts`: the innermost one's, unless one around it already
  // has a time, which then covers it (its commit is that one's).
  private stamp(ts: bigint): void {
    if (this.levels.some((l) => l.stamp !== undefined)) return;
    const level = this.levels.at(-1);
    if (level !== undefined) level.stamp = ts;
  }

  // On the level that has the commit time.
  private durableAt(ts: bigint): void {
    const level = this.levels.find((l) => l.stamp !== undefined);
    if (level !== undefined) level.durable = ts;
  }

  // Runs `fn` with every read outside a write unit going through `view`.
  withView<T>(view: KvView | undefined, fn: () => T): T {
    const previous = this.activeView;
    this.activeView = view;
    try {
      return fn();
    } finally {
      this.activeView = previous;
    }
  }

  // Point reads share one read transaction until the next write commits, instead of lmdb-js
  // renewing its own on every event-loop turn (a timer, and a reset and renewal per turn). Every
  // write goes through writeSync, which lets it go, so the snapshot is never older than the
  // last commit. Inside a write unit lmdb-js reads through the write transaction instead.
  private readTxn: Transaction | undefined;
  private readOptions: { transaction?: Transaction } = {};

  reading(): { transaction?: Transaction } {
    if (this.readTxn === undefined) {
      this.readTxn = this.root.useReadTransaction();
      this.readOptions = { transaction: this.readTxn };
    }
    return this.readOptions;
  }

  private endReading(): void {
    if (this.readTxn === undefined) return;
    this.readTxn.done();
    this.readTxn = undefined;
  }

  get(key: Buffer): Buffer | undefined {
    return this.main.get(key);
  }

  peek(key: Buffer): Buffer | undefined {
    return this.main.peek(key);
  }

  range(start: Buffer, end: Buffer, options: RangeOptions = {}): Iterable<KvEntry> {
    return this.main.range(start, end, options);
  }

  // Atomic: either every put/remove made by `fn` commits, or (when it throws) none does. The
  // commit is in the data file when this returns. With LMDB's overlapping sync (lmdb-js's default)
  // this thread also waits for the disk here, whatever flags the transaction has.
  writeSync<T>(fn: (w: KvWriter) => T): T {
    return this.transaction(() => fn(this.writer));
  }

  // writeSync, recording nothing in the version history: a restore to an earlier time
  // (restore_to_timestamp.ts), whose writes take the store back to what the history says it held.
  writeOutsideHistory<T>(fn: (w: KvWriter) => T): T {
    const history = this.history;
    this.history = undefined;
    try {
      return this.writeSync(fn);
    } finally {
      this.history = history;
    }
  }

  // Like writeSync, but committed by lmdb-js's write thread: `fn` runs on this thread when that
  // thread hands over its transaction (as a child transaction, so a throw still undoes all of
  // it), and the commit, with the wait for the disk that LMDB's overlapping sync makes every
  // commit pay, happens there while this thread goes on. The promise settles after the commit.
  writeAsync<T>(fn: (w: KvWriter) => T): Promise<T> {
    // lmdb-js runs the callback between events, never inside another transaction of this thread;
    // its frame is kept until the commit, which may still fail.
    let frame: (() => void)[] = [];
    const commit = this.main.handle().childTransaction(() => this.inUnit(() => fn(this.writer), (f) => (frame = f))) as Promise<T>;
    return commit.then(
      (result) => {
        this.endReading();
        return result;
      },
      (err: unknown) => {
        this.endReading();
        undo(frame);
        throw err;
      },
    );
  }

  // Flushes every commit so far to disk (mdb_env_sync, on lmdb's worker thread). lmdb-js has the
  // method on the root database but not in its typings.
  sync(): Promise<void> {
    const root = this.root as unknown as { sync(callback: (error?: Error) => void): void };
    return new Promise((resolve, reject) => root.sync((error) => (error ? reject(error) : resolve())));
  }

  // Runs `fns` in one write transaction and commits them together. A writeSync made by one of
  // them runs as a child transaction (LMDB nests them), so it still commits or aborts on its own.
  writeGroup(fns: readonly (() => void)[]): void {
    this.transaction(() => {
      for (const fn of fns) fn();
    });
  }

  private transaction<T>(fn: () => T): T {
    return this.inUnit(() => this.main.handle().transactionSync(fn));
  }

  // Runs `run` as one transaction level: its rollbacks are undone if it throws, and otherwise go
  // to the enclosing level, or to `keep` for an outermost level whose commit is still to come.
  // A write unit reads the latest values, whatever view is active around it.
  private inUnit<T>(run: () => T, keep?: (frame: (() => void)[]) => void): T {
    this.endReading();
    const view = this.activeView;
    this.activeView = undefined;
    this.levels.push({ undo: [], changes: undefined, stamp: undefined, durable: undefined });
    try {
      const result = run();
      const level = this.levels.pop()!;
      this.settleChanges(level);
      const parent = this.levels.at(-1);
      if (parent !== undefined) parent.undo.push(...level.undo);
      else keep?.(level.undo);
      return result;
    } catch (err) {
      undo(this.levels.pop()!.undo);
      throw err;
    } finally {
      this.activeView = view;
      this.endReading();
    }
  }

  // A committed level's changes: into the history under its time, or handed to the level around
  // it; an outermost level without a time (catalog and DDL units) leaves only a note of where it
  // wrote.
  private settleChanges(level: Level): void {
    if (level.changes === undefined || this.history === undefined) return;
    const parent = this.levels.at(-1);
    if (level.stamp !== undefined) {
      const history = this.history;
      const record = history.add(level.stamp, level.changes, level.durable);
      level.undo.push(() => history.retract(record));
      return;
    }
    if (parent === undefined) {
      this.history.unrecorded(level.changes, MAIN);
      return;
    }
    const into = (parent.changes ??= []);
    for (const change of level.changes) into.push(change);
  }

  async flushed(): Promise<void> {
    await this.root.flushed;
  }

  async close(): Promise<void> {
    this.endReading();
    await this.root.close();
  }
}

function undo(frame: readonly (() => void)[]): void {
  for (let i = frame.length - 1; i >= 0; i--) frame[i]!();
}
