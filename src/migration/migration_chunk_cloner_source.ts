import { compareValues } from '../bson/compare.js';
import { encodeKey } from '../bson/key_string.js';
import { serializeDocument, type Doc } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import { ErrorCodes } from '../base/error_codes.js';
import { ShardKeyPattern } from '../catalog/shard_key_pattern.js';
import type { ChunkRange } from '../config/chunk_range.js';
import { prepareFind } from '../query/exec/find_query.js';
import type { OpObserver, StoredDocument } from '../storage/op_observer.js';
import type { StorageEngine } from '../storage/storage_engine.js';

// MongoDB's BSONObjMaxUserSize: one _migrateClone or _transferMods batch stays under a message.
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;

export interface TransferModsBatch {
  readonly reload: Buffer[];
  readonly deleted: Doc[];
  readonly size: number;
}

// The donor's side of the data transfer (MongoDB's MigrationChunkClonerSource). At start it
// takes the record ids of the range in shard key order; _migrateClone serves those records as they
// are at the moment of the batch. Its op observer remembers the _id of every document of the range
// written since, and _transferMods serves each one's state at the moment of the batch: the
// current document when it is still in the range, a deletion otherwise. Serving the current state
// rather than a log of operations makes a write whose unit rolled back harmless.
export class MigrationChunkClonerSource implements OpObserver {
  private recordIds: number[] = [];
  private next = 0;
  private readonly dirty = new Map<string, unknown>();
  private readonly pattern: ShardKeyPattern;
  private readonly minKey: Buffer;
  private readonly maxKey: Buffer;

  constructor(private readonly storage: StorageEngine, readonly nss: string, readonly range: ChunkRange, keyPattern: Doc) {
    this.pattern = new ShardKeyPattern(keyPattern);
    this.minKey = this.pattern.keyString(range.min);
    this.maxKey = this.pattern.keyString(range.max);
  }

  // Registers the observer before the snapshot of record ids, so no write falls between them.
  start(): void {
    this.storage.observers.push(this);
    const coll = this.storage.getCollection(this.nss);
    if (coll === undefined) return;
    const index = coll.indexes.find((i) => compareValues(i.keyPattern, this.pattern.keyPattern) === 0);
    if (index === undefined) {
      this.stop();
      throw new MongoError(ErrorCodes.IndexNotFound, `couldn't find index over shard key ${this.pattern.toString()} for ${this.nss}`);
    }
    const found = prepareFind(this.storage, coll, { filter: {}, hint: index.name, min: this.range.min, max: this.range.max });
    this.recordIds = [...found.results].map((r) => r.recordId);
  }

  stop(): void {
    const at = this.storage.observers.indexOf(this);
    if (at >= 0) this.storage.observers.splice(at, 1);
  }

  // The next records of the initial snapshot (raw BSON); empty once all were served. A record
  // deleted since the snapshot is skipped: its deletion is in the dirty set already.
  nextCloneBatch(): Buffer[] {
    const coll = this.storage.getCollection(this.nss);
    const out: Buffer[] = [];
    let size = 0;
    while (coll !== undefined && this.next < this.recordIds.length) {
      const bytes = this.storage.getRecord(coll, this.recordIds[this.next]!);
      if (bytes !== undefined && out.length > 0 && size + bytes.length > MAX_BATCH_BYTES) break;
      this.next++;
      if (bytes === undefined) continue;
      out.push(bytes);
      size += bytes.length;
    }
    return out;
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
      const found = coll === undefined ? undefined : [...prepareFind(this.storage, coll, { filter: { _id: id }, limit: 1 }).results][0];
      const inRange = found !== undefined && this.inRange(found.doc);
      const bytes = inRange ? (found.bytes ?? serializeDocument(found.doc)) : undefined;
      const cost = bytes?.length ?? 32;
      if (size > 0 && size + cost > MAX_BATCH_BYTES) break;
      this.dirty.delete(key);
      size += cost;
      if (bytes !== undefined) reload.push(bytes);
      else deleted.push({ _id: id });
    }
    return { reload, deleted, size };
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
    this.dirty.set(encodeKey([id]).toString('hex'), id);
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
