import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';

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

class Space implements KvSpaceWriter {
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
    if (key.length > MAX_KEY_BYTES) return undefined;
    const value = this.handle().get(key, this.store.reading());
    return value === undefined ? undefined : ownBuffer(value);
  }

  // lmdb-js's getBinaryFast takes the read transaction too, though its typings leave it out. Its
  // buffer has a `length` property set to the value's size over a larger typed array, which
  // native copies ignore: the view returned has the value's size as its own.
  peek(key: Buffer): Buffer | undefined {
    if (key.length > MAX_KEY_BYTES) return undefined;
    const db = this.handle() as unknown as { getBinaryFast(key: Buffer, options: { transaction?: Transaction }): Buffer | undefined };
    const value = db.getBinaryFast(key, this.store.reading());
    return value?.subarray(0, value.length);
  }

  *range(start: Buffer, end: Buffer, options: RangeOptions = {}): Iterable<KvEntry> {
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
    this.handle().putSync(key, value);
  }

  // putSync returns whether it wrote (lmdb's README), though its typings say void.
  append(key: Buffer, value: Buffer): boolean {
    return this.handle().putSync(key, value, APPEND) as unknown as boolean;
  }

  putIfAbsent(key: Buffer, value: Buffer): boolean {
    return this.handle().putSync(key, value, NO_OVERWRITE) as unknown as boolean;
  }

  remove(key: Buffer): void {
    this.handle().removeSync(key);
  }
}

export class KvStore implements KvReader {
  private readonly root: RootDatabase;
  private readonly spaces = new Map<string, Space>();
  private readonly main: Space;
  private readonly writer: KvWriter;
  // What to undo in memory if the transaction that changed it aborts: one frame per open
  // transaction, innermost last, as MongoDB's RecoveryUnit::onRollback. A nested transaction that
  // commits hands its frame to the enclosing one, whose abort undoes the child's commit too.
  private readonly rollbacks: (() => void)[][] = [];

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
    this.rollbacks.at(-1)?.push(undo);
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
  private inUnit<T>(run: () => T, keep?: (frame: (() => void)[]) => void): T {
    this.endReading();
    this.rollbacks.push([]);
    try {
      const result = run();
      const frame = this.rollbacks.pop()!;
      if (this.rollbacks.length > 0) this.rollbacks.at(-1)!.push(...frame);
      else keep?.(frame);
      return result;
    } catch (err) {
      undo(this.rollbacks.pop()!);
      throw err;
    } finally {
      this.endReading();
    }
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
