import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';

// The only file that touches lmdb. Everything above sees an ordered byte-keyed store with
// synchronous atomic write units: a write unit's commit is in the data file when writeSync
// returns (it survives kill -9 of the process); `flushed` additionally waits for fsync.
export interface KvEntry {
  key: Buffer;
  value: Buffer;
}

export interface RangeOptions {
  reverse?: boolean;
  limit?: number;
}

export interface KvReader {
  get(key: Buffer): Buffer | undefined;
  // [start, end) in forward order; with reverse, iterates from just below `end` down to `start`.
  range(start: Buffer, end: Buffer, options?: RangeOptions): Iterable<KvEntry>;
}

export interface KvWriter extends KvReader {
  put(key: Buffer, value: Buffer): void;
  // Writes only when `key` is absent; false (and nothing written) when it is there already. One
  // B-tree descent instead of a read followed by a write.
  putIfAbsent(key: Buffer, value: Buffer): boolean;
  remove(key: Buffer): void;
}

const NO_OVERWRITE = { noOverwrite: true } as const;

// The longest key lmdb-js stores (its build of LMDB raises MDB_MAXKEYSIZE to this). Longer keys
// are refused by put; reads and ranges given one answer as if the store could hold it.
export const MAX_KEY_BYTES = 1978;

// With binary encoding lmdb-js hands out a fresh copy of each key and value (a slice of its
// read buffer), never its reused buffer itself: it can be kept as it is, without copying again.
function ownBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class KvStore implements KvReader {
  private readonly root: RootDatabase;
  private readonly db: Database<Buffer, Buffer>;
  private readonly writer: KvWriter;

  private constructor(path: string) {
    this.root = open({ path, keyEncoding: 'binary', encoding: 'binary', mapSize: 2 ** 36, maxDbs: 4, compression: false });
    this.db = this.root.openDB<Buffer, Buffer>({ name: 'docshard', keyEncoding: 'binary', encoding: 'binary' });
    const db = this.db;
    this.writer = {
      get: (key) => this.get(key),
      range: (start, end, options) => this.range(start, end, options),
      put: (key, value) => { db.putSync(key, value); },
      // putSync returns whether it wrote (lmdb's README), though its typings say void.
      putIfAbsent: (key, value) => (db.putSync(key, value, NO_OVERWRITE) as unknown as boolean),
      remove: (key) => { db.removeSync(key); },
    };
  }

  static open(path: string): KvStore {
    return new KvStore(path);
  }

  // Point reads share one read transaction until the next write commits, instead of lmdb-js
  // renewing its own on every event-loop turn (a timer, and a reset and renewal per turn). Every
  // write goes through writeSync, which lets it go, so the snapshot is never older than the
  // last commit.
  private readTxn: Transaction | undefined;
  private readOptions: { transaction?: Transaction } = {};

  private reading(): { transaction?: Transaction } {
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
    if (key.length > MAX_KEY_BYTES) return undefined;
    const value = this.db.get(key, this.reading());
    return value === undefined ? undefined : ownBuffer(value);
  }

  *range(start: Buffer, end: Buffer, options: RangeOptions = {}): Iterable<KvEntry> {
    // A bound longer than any key is cut to MAX_KEY_BYTES. The cut is below the bound, and the
    // only key that can lie between them is the cut itself (it is a prefix of the bound; any
    // other stored key differs from both in a byte within the cut): an end bound then takes the
    // cut in, a start bound leaves it out.
    const longStart = start.length > MAX_KEY_BYTES;
    const longEnd = end.length > MAX_KEY_BYTES;
    const from = longStart ? start.subarray(0, MAX_KEY_BYTES) : start;
    const to = longEnd ? end.subarray(0, MAX_KEY_BYTES) : end;
    const limit = longStart ? undefined : options.limit;
    const spec = options.reverse
      ? { start: to, end: from, reverse: true, limit, exclusiveStart: !longEnd, inclusiveEnd: true }
      : { start: from, end: to, limit, inclusiveEnd: longEnd };
    let left = options.limit ?? Infinity;
    for (const { key, value } of this.db.getRange(spec)) {
      if (longStart && key.length === MAX_KEY_BYTES && Buffer.compare(key, start) < 0) continue;
      if (left-- <= 0) return;
      yield { key: ownBuffer(key), value: ownBuffer(value) };
    }
  }

  // Atomic: either every put/remove made by `fn` commits, or (when it throws) none does. The
  // commit is in the data file when this returns. With LMDB's overlapping sync (lmdb-js's default)
  // this thread also waits for the disk here, whatever flags the transaction has.
  writeSync<T>(fn: (w: KvWriter) => T): T {
    this.endReading();
    try {
      return this.db.transactionSync(() => fn(this.writer));
    } finally {
      this.endReading();
    }
  }

  // Like writeSync, but committed by lmdb-js's write thread: `fn` runs on this thread when that
  // thread hands over its transaction (as a child transaction, so a throw still undoes all of
  // it), and the commit, with the wait for the disk that LMDB's overlapping sync makes every
  // commit pay, happens there while this thread goes on. The promise settles after the commit.
  writeAsync<T>(fn: (w: KvWriter) => T): Promise<T> {
    const commit = this.db.childTransaction(() => {
      this.endReading();
      return fn(this.writer);
    }) as Promise<T>;
    return commit.finally(() => this.endReading());
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
    this.endReading();
    try {
      this.db.transactionSync(() => {
        for (const fn of fns) fn();
      });
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
