import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { BSON, type Binary, type Timestamp } from 'bson';
import { isPlainObject, type Doc } from '../bson/values.js';
import type { OplogReads } from '../oplog/oplog_reads.js';
import { OPLOG_NS } from '../oplog/oplog_entry.js';
import type { LocalCollections } from '../query/exec/local_collection.js';
import type { Collection, StorageEngine } from '../storage/storage_engine.js';
import { bumpRollbackId } from './repl_store.js';

// The data side of a member's rollback (issue 31, "Rollback"): once the protocol core found the
// common point with its sync source (its `truncateOplogAfter` effect), everything this member
// committed after that point goes, oplog and data alike. MongoDB 4.4+ recovers to a stable
// timestamp and replays; docshard puts the store back to the common point from its version history
// (StorageEngine.restoreTo) without fetching anything from the source. When the history cannot
// (a restart since, the window passed, a collection or index dropped since), nothing changes and
// the member needs a full resync.
//
// Before the restore, every document the undone entries touched is saved as this member held it,
// in MongoDB's layout: <dbpath>/rollback/<collection uuid>/removed.<time>.bson, the documents one
// after another, on disk (fsync) before anything is undone.

export type RollbackDataResult =
  // The store is back at the common point; the oplog ends there.
  | { outcome: 'rolledBack'; rollbackId: number; undoneEntries: number; files: string[] }
  // The common point is before the majority commit point: nothing changed, nothing written.
  | { outcome: 'refused'; reason: string }
  // Nothing changed; the member must be wiped and initial-synced.
  | { outcome: 'needsResync'; reason: string };

export interface RollbackDataOptions {
  storage: StorageEngine;
  reads: OplogReads;
  dbpath: string;
  // The member's majority commit point; the common point may not be before it.
  majorityCommitPoint: Timestamp | undefined;
  // Where local.system.rollback.id is raised, inside the restore's commit (repl_store.ts).
  local: LocalCollections;
  now: () => Date;
}

// A member's local database stays as it is (its vote, config and rollback id are not rolled back);
// its oplog is rolled back with the data.
const keep = (ns: string): boolean => ns.startsWith('local.') && ns !== OPLOG_NS;

export function rollBackTo(commonPoint: Timestamp, options: RollbackDataOptions): RollbackDataResult {
  const { storage, majorityCommitPoint } = options;
  if (majorityCommitPoint !== undefined && commonPoint.lessThan(majorityCommitPoint)) {
    return { outcome: 'refused', reason: `common point ${show(commonPoint)} is before the majority commit point ${show(majorityCommitPoint)}` };
  }
  const check = storage.canRestoreTo(commonPoint, { keep });
  if (!check.restored) return { outcome: 'needsResync', reason: check.reason };
  const entries = options.reads.entriesFrom(commonPoint).filter((e) => (e.ts as Timestamp).greaterThan(commonPoint));
  const files = writeRollbackFiles(storage, touchedDocuments(entries), options.dbpath, options.now());
  let rollbackId = 0;
  const restore = storage.restoreTo(commonPoint, { keep, alongside: () => (rollbackId = bumpRollbackId(options.local)) });
  if (!restore.restored) return { outcome: 'needsResync', reason: restore.reason };
  return { outcome: 'rolledBack', rollbackId, undoneEntries: entries.length, files };
}

// The documents the entries inserted, updated or deleted, by collection uuid (hex) and _id, each once.
function touchedDocuments(entries: readonly Doc[]): Map<string, { uuid: Binary; ids: Map<string, unknown> }> {
  const out = new Map<string, { uuid: Binary; ids: Map<string, unknown> }>();
  const visit = (op: Doc): void => {
    if (op.op === 'c' && isPlainObject(op.o) && Array.isArray(op.o.applyOps)) {
      for (const inner of op.o.applyOps) if (isPlainObject(inner)) visit(inner);
      return;
    }
    if ((op.op !== 'i' && op.op !== 'u' && op.op !== 'd') || op.ui === undefined) return;
    const id = op.op === 'u' ? (op.o2 as Doc)._id : (op.o as Doc)._id;
    const uuid = op.ui as Binary;
    const key = uuid.toString('hex');
    const forCollection = out.get(key) ?? { uuid, ids: new Map<string, unknown>() };
    forCollection.ids.set(Buffer.from(BSON.serialize({ _id: id })).toString('latin1'), id);
    out.set(key, forCollection);
  };
  for (const entry of entries) visit(entry);
  return out;
}

// One file per collection holding documents this member has now; a document an undone entry
// deleted is not here to save. Each file, and the directories naming it, is synced to disk.
function writeRollbackFiles(storage: StorageEngine, touched: ReturnType<typeof touchedDocuments>, dbpath: string, now: Date): string[] {
  const files: string[] = [];
  const root = path.join(dbpath, 'rollback');
  for (const { uuid, ids } of touched.values()) {
    const coll = byUuid(storage, uuid);
    if (coll === undefined || coll.index('_id_') === undefined) continue;
    const docs: Buffer[] = [];
    for (const id of ids.values()) {
      const found = coll.findById(storage.kv, id);
      if (found !== undefined) docs.push(found.bytes);
    }
    if (docs.length === 0) continue;
    const dir = path.join(root, uuid.toUUID().toString());
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `removed.${now.toISOString().replace(/:/g, '-').replace('Z', '')}.bson`);
    const fd = openSync(file, 'a');
    try {
      writeSync(fd, Buffer.concat(docs));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    syncDirectory(dir);
    files.push(file);
  }
  if (files.length > 0) {
    syncDirectory(root);
    syncDirectory(dbpath);
  }
  return files;
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function byUuid(storage: StorageEngine, uuid: Binary): Collection | undefined {
  return storage.listCollections().find((c) => c.entry.uuid.buffer.length === uuid.buffer.length && Buffer.compare(c.entry.uuid.buffer, uuid.buffer) === 0);
}

function show(ts: Timestamp): string {
  return `Timestamp(${ts.t}, ${ts.i})`;
}
