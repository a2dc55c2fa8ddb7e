import type { Binary, Timestamp } from 'bson';
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
  onUpdate?(w: KvWriter, ns: string, before: Doc, after: Doc, bytes: Buffer, how?: UpdateHow): void;
  // `before` holds at least the fields the collection's indexes read (so `_id` and the shard key),
  // as MongoDB's observer gets the document key; a bulk deleter need not decode the rest.
  onDelete?(w: KvWriter, ns: string, before: Doc): void;
  // Catalog changes, inside their units, after the change (the oplog logs them; MongoDB's
  // OpObserver has the same set). `options` and `spec` as the catalog holds them.
  onCreateCollection?(w: KvWriter, ns: string, uuid: Binary, options: Doc, idIndex: Doc | undefined): void;
  onDropCollection?(w: KvWriter, ns: string, uuid: Binary, numRecords: number): void;
  onRenameCollection?(w: KvWriter, from: string, to: string, uuid: Binary): void;
  onCreateIndex?(w: KvWriter, ns: string, uuid: Binary, spec: Doc): void;
  onDropIndex?(w: KvWriter, ns: string, uuid: Binary, spec: Doc): void;
  // collMod: the collection's options or one index's spec replaced (`index`: its name).
  onCollMod?(w: KvWriter, ns: string, uuid: Binary, change: { options: { before: Doc; after: Doc } } | { index: { before: Doc; after: Doc } }): void;
  onDropDatabase?(w: KvWriter, db: string): void;
}

// What an update was, for the oplog's record of it: a replacement (a change stream's replace
// event) or not, and the whole document before when `before` holds only its indexed fields.
export interface UpdateHow {
  replacement?: boolean;
  beforeBytes?: Buffer;
}

// Who a unit writes for, as the session layer tells it (retryable writes and transaction
// commits): what the oplog entry of the unit carries as lsid, txnNumber, stmtId.
export interface OperationSessionInfo {
  lsid: Doc;
  txnNumber: number;
  // The statements run in the unit (retryable writes); absent for a transaction's commit.
  stmtIds?: number[];
  // A multi-document transaction's commit: its entry is always an applyOps.
  transaction?: boolean;
}

// A write unit or catalog change as a UnitObserver sees it.
export interface UnitContext {
  // Its commit time so far (undefined: none taken yet).
  readonly timestamp: Timestamp | undefined;
  // Its commit time, taken now if it has none.
  commitTimestamp(): Timestamp | undefined;
  sessionInfo: OperationSessionInfo | undefined;
  readonly fromMigrate: boolean;
}

// Brackets every write unit and catalog change outside transactions: `begin` when it starts,
// `beforeCommit` inside its transaction after its last change (what it writes commits with the
// unit; what it throws aborts the unit), `end` always, committed or not. Units nest (an insert's
// unit creating its collection), so calls nest too. One per engine (the oplog writer); none on a
// node that writes no oplog, which then pays nothing.
export interface UnitObserver {
  begin(unit: UnitContext): void;
  beforeCommit(w: KvWriter, unit: UnitContext): void;
  end(): void;
}

// A document the caller holds decoded already.
export function decodedDocument(doc: Doc, bytes: Buffer): StoredDocument {
  return { bytes, fields: () => doc, whole: () => doc };
}
