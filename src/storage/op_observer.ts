import type { Doc } from '../bson/values.js';
import type { KvWriter } from './lmdb/kv_store.js';

// Called inside the write unit of every document write, so whatever an observer persists
// (migration capture today; the oplog and change streams later) commits atomically with the write.
export interface OpObserver {
  onInsert?(w: KvWriter, ns: string, doc: Doc, bytes: Buffer): void;
  onUpdate?(w: KvWriter, ns: string, before: Doc, after: Doc, bytes: Buffer): void;
  onDelete?(w: KvWriter, ns: string, before: Doc): void;
}
