import type { Doc } from '../bson/values.js';
import type { KvWriter } from './lmdb/kv_store.js';

// The writer an observer is handed, named here so that observers outside src/storage need not
// reach the LMDB adapter.
export type { KvWriter };

// A document as it is being stored: its bytes, and its values decoded on demand. A document that
// arrived as BSON (an insert command's document sequence, a migration's clone batch) is never
// decoded whole unless someone asks for `whole()`.
export interface StoredDocument {
  readonly bytes: Buffer;
  // A document holding at least the top-level fields that `paths` start with ('a.b' needs 'a').
  // Shared with the write path: do not change it.
  fields(paths: readonly string[]): Doc;
  whole(): Doc;
}

// Called inside the write unit of every document write, so whatever an observer persists
// (migration capture today; the oplog and change streams later) commits atomically with the write.
export interface OpObserver {
  onInsert?(w: KvWriter, ns: string, doc: StoredDocument): void;
  // `before` and `after` hold at least the fields the collection's indexes read (a document
  // replaced from its bytes, WriteUnit.upsertBytes, is decoded no further); `bytes` is `after`'s.
  onUpdate?(w: KvWriter, ns: string, before: Doc, after: Doc, bytes: Buffer): void;
  // `before` holds at least the fields the collection's indexes read (so `_id` and the shard key),
  // as MongoDB's observer gets the document key; a bulk deleter need not decode the rest.
  onDelete?(w: KvWriter, ns: string, before: Doc): void;
}

// A document the caller holds decoded already.
export function decodedDocument(doc: Doc, bytes: Buffer): StoredDocument {
  return { bytes, fields: () => doc, whole: () => doc };
}
