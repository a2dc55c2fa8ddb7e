import { compareValues } from '../bson/compare.js';
import { encodeKey } from '../bson/key_string.js';
import { idOfBytes, LazyDocument } from '../bson/raw_document.js';
import type { Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkRange } from '../catalog/chunk_range.js';
import { ClonePacer, DEFAULT_LOADED_OPS_PER_SECOND } from './clone_pacer.js';
import type { IndexAccess } from '../storage/index_access.js';
import { RECORD_ID_BYTES, writeRecordId } from '../storage/key_layout.js';
import type { OpObserver, StoredDocument } from '../storage/op_observer.js';
import { RawArray, RawArrayBuilder } from '../wire/raw_bson.js';
import type { Collection, StorageEngine } from '../storage/storage_engine.js';

// A _migrateClone or _transferMods batch is read and encoded in one turn of the donor's event
// loop, so its size bounds how long the donor's own writes wait behind it (MongoDB fills 16 MB).
// The clone's batch size is the pacer's (ClonePacing.batchBytes): larger on an idle donor, where
// each batch's fixed costs (a round trip, a transaction on the recipient) are what is left to save.
export const BATCH_BYTES = 1024 * 1024;

// A _migrateClone batch: the documents as one BSON array, copied straight out of the store.
export interface CloneBatch {
  readonly objects: RawArray;
  readonly count: number;
  readonly size: number;
}

export interface TransferModsBatch {
  readonly reload: Buffer[];
  readonly deleted: Doc[];
  readonly size: number;
}

// The donor's side of the data transfer (MongoDB's MigrationChunkClonerSource). _migrateClone
// walks the shard key index over the range, a batch at a time from where the last one stopped,
// and serves the records as they are at the moment of the batch. Unlike MongoDB, it takes no
// snapshot of record ids up front: that read every document of the range in one synchronous
// turn before the recipient could start. Its op observer, registered first, remembers the _id of
// every document of the range written since, and _transferMods serves each one's state at the
// moment of the batch: the current document when it is still in the range, a deletion otherwise.
// A document the clone serves after such a write leaves the set (the batch has its current state),
// so the catch-up carries only what changed behind the walk or after it was served. Serving the
// current state rather than a log of operations makes a write whose unit rolled back harmless:
// the observer sees writes before they commit, the clone reads committed documents only, and
// every write unit on a donor commits synchronously (asynchronous commits are the recipient's).
export class MigrationChunkClonerSource implements OpObserver {
  private index: IndexAccess | undefined;
  // Where the walk resumes: the last index entry served.
  private resume: { keyString: Buffer; recordId: number } | undefined;
  private exhausted = false;
  // A document whose shard key moves up the range during the clone is met twice by the walk.
  private readonly served = new Set<number>();
  private readonly dirty = new Map<string, unknown>();
  private readonly pattern: ShardKeyPattern;
  private readonly minKey: Buffer;
  private readonly maxKey: Buffer;

  constructor(
    private readonly storage: StorageEngine, readonly nss: string, readonly range: ChunkRange, keyPattern: Doc,
    readonly pacer: ClonePacer = new ClonePacer({ percentUnderLoad: 100, loadedOpsPerSecond: DEFAULT_LOADED_OPS_PER_SECOND }),
  ) {
    this.pattern = new ShardKeyPattern(keyPattern);
    this.minKey = this.pattern.keyString(range.min);
    this.maxKey = this.pattern.keyString(range.max);
  }

  // Registers the observer before the first batch is read, so no write falls between them.
  start(): void {
    this.storage.observers.push(this);
    const coll = this.storage.getCollection(this.nss);
    if (coll === undefined) return;
    this.index = coll.indexes.find((i) => i.collation === undefined && compareValues(i.keyPattern, this.pattern.keyPattern) === 0);
    if (this.index === undefined) {
      this.stop();
      throw new MongoError(ErrorCodes.IndexNotFound, `couldn't find index over shard key ${this.pattern.toString()} for ${this.nss}`);
    }
  }

  stop(): void {
    const at = this.storage.observers.indexOf(this);
    if (at >= 0) this.storage.observers.splice(at, 1);
  }

  // The next records of the range in shard key order; empty once all were served. Each record is
  // copied from the store's read buffer into the batch, the one copy it needs before the reply.
  nextCloneBatch(maxBytes = BATCH_BYTES): CloneBatch {
    const coll = this.storage.getCollection(this.nss);
    if (coll === undefined || this.index === undefined || this.exhausted) return { objects: new RawArrayBuilder(0).finish(), count: 0, size: 0 };
    const out = new RawArrayBuilder(maxBytes);
    let size = 0;
    const resume = this.resume;
    const start = resume === undefined ? this.minKey : entryAfter(resume);
    let last: { keyString: Buffer; recordId: number } | undefined;
    let full = false;
    for (const entry of this.index.scan(this.storage.kv, start, this.maxKey, false)) {
      if (this.served.has(entry.recordId)) continue;
      const bytes = this.storage.peekRecord(coll, entry.recordId);
      if (bytes === undefined) continue;
      if (out.length > 0 && size + bytes.length > maxBytes) {
        full = true;
        break;
      }
      last = entry;
      this.served.add(entry.recordId);
      // Served as it is now, so a write captured before needs no reload (a later one marks it again).
      if (this.dirty.size > 0) this.dirty.delete(dirtyKey(idOfBytes(bytes)));
      out.push(bytes);
      size += bytes.length;
    }
    // The scan's buffers may be reused once it moves on.
    if (last !== undefined) this.resume = { keyString: Buffer.from(last.keyString), recordId: last.recordId };
    if (!full) this.exhausted = true;
    return { objects: out.finish(), count: out.length, size };
  }

  // How many documents _transferMods still has to send (the donor's transferModsPending).
  get pendingMods(): number {
    return this.dirty.size;
  }

  nextModsBatch(): TransferModsBatch {
    const coll = this.storage.getCollection(this.nss);
    const reload: Buffer[] = [];
    const deleted: Doc[] = [];
    let size = 0;
    for (const [key, id] of this.dirty) {
      const bytes = coll === undefined ? undefined : this.currentInRange(coll, id);
      const cost = bytes?.length ?? 32;
      if (size > 0 && size + cost > BATCH_BYTES) break;
      this.dirty.delete(key);
      size += cost;
      if (bytes !== undefined) reload.push(bytes);
      else deleted.push({ _id: id });
    }
    return { reload, deleted, size };
  }

  // The document with this _id as stored now, if it is in the range.
  private currentInRange(coll: Collection, id: unknown): Buffer | undefined {
    const bytes = coll.findById(this.storage.kv, id)?.bytes;
    if (bytes === undefined) return undefined;
    const doc = new LazyDocument(bytes).fields(this.pattern.fields);
    return this.inRange(doc) ? bytes : undefined;
  }

  onInsert(_w: unknown, ns: string, stored: StoredDocument): void {
    if (ns !== this.nss) return;
    const doc = stored.fields(['_id', ...Object.keys(this.pattern.keyPattern)]);
    if (this.inRange(doc)) this.markDirty(doc._id);
  }

  onUpdate(_w: unknown, ns: string, before: Doc, after: Doc): void {
    if (ns === this.nss && (this.inRange(before) || this.inRange(after))) this.markDirty(after._id);
  }

  onDelete(_w: unknown, ns: string, before: Doc): void {
    if (ns === this.nss && this.inRange(before)) this.markDirty(before._id);
  }

  private markDirty(id: unknown): void {
    this.dirty.set(dirtyKey(id), id);
  }

  private inRange(doc: Doc): boolean {
    let key: Buffer;
    try {
      key = this.pattern.keyString(this.pattern.extractShardKeyFromDoc(doc));
    } catch {
      return false; // a document without a storable shard key cannot be in any chunk
    }
    return Buffer.compare(key, this.minKey) >= 0 && Buffer.compare(key, this.maxKey) < 0;
  }
}

function dirtyKey(id: unknown): string {
  return encodeKey([id]).toString('hex');
}

// The lowest index position after `last`: entries are ordered by key string, then record id, and
// key strings are prefix-free (src/bson/key_string.ts).
function entryAfter(last: { keyString: Buffer; recordId: number }): Buffer {
  const start = Buffer.allocUnsafe(last.keyString.length + RECORD_ID_BYTES);
  last.keyString.copy(start, 0);
  writeRecordId(start, last.keyString.length, last.recordId + 1);
  return start;
}

