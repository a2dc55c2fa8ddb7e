import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BSON, Timestamp } from 'bson';
import { compareValues } from '../bson/compare.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { enableOplog, type ReplicatedOplog } from '../oplog/replicated_oplog.js';
import { TestClock } from '../oplog/oplog_test_util.js';
import { OPLOG_NS } from '../oplog/oplog_entry.js';
import { LocalCollections } from '../query/exec/local_collection.js';
import { StorageEngine, type Collection } from '../storage/storage_engine.js';
import { dumpStore, equalities } from '../storage/test_support.js';
import { localReplStore } from './repl_store.js';
import { rollBackTo, type RollbackDataResult } from './rollback_data.js';

// What a rollback leaves alone: the member's local database, but for its oplog.
const localKept = (ns: string): boolean => ns.startsWith('local.') && ns !== OPLOG_NS;

interface Member {
  dir: string;
  clock: TestClock;
  storage: StorageEngine;
  oplog: ReplicatedOplog;
  local: LocalCollections;
}

function open(dir: string, clock: TestClock): Member {
  const storage = StorageEngine.open(dir, { compilePartialFilter: equalities, clock });
  const oplog = enableOplog(storage, { term: () => 1, checkCanWrite: () => undefined, clock });
  return { dir, clock, storage, oplog, local: new LocalCollections(storage) };
}

function rollBack(m: Member, commonPoint: Timestamp, majorityCommitPoint?: Timestamp): RollbackDataResult {
  return rollBackTo(commonPoint, {
    storage: m.storage,
    reads: m.oplog.reads,
    dbpath: m.dir,
    majorityCommitPoint,
    local: m.local,
    now: () => new Date('2026-12-06T13:05:01.250Z'),
  });
}

function insert(m: Member, ns: string, ...docs: Doc[]): void {
  m.storage.write((u) => {
    const coll = m.storage.ensureCollection(ns).coll;
    for (const d of docs) u.insert(coll, d);
  });
}

function replace(m: Member, ns: string, after: Doc): void {
  m.storage.write((u) => {
    const coll = m.storage.getCollection(ns)!;
    const found = coll.findById(u.kv, after._id)!;
    u.update(coll, found.recordId, deserializeDocument(found.bytes), found.bytes.length, after);
  });
}

function dumpAt(m: Member, at: Timestamp): Record<string, string[]> {
  const view = m.storage.snapshotAt(at);
  try {
    return m.storage.kv.withView(view, () => dumpStore(m.storage, localKept));
  } finally {
    view.release();
  }
}

function lastTs(m: Member): Timestamp {
  return m.oplog.reads.lastOpTime()!.ts;
}

// A rollback file: BSON documents one after another, each led by its length.
function readBsonFile(file: string): Doc[] {
  const bytes = readFileSync(file);
  const docs: Doc[] = [];
  for (let at = 0; at < bytes.length; at += bytes.readInt32LE(at)) docs.push(BSON.deserialize(bytes.subarray(at, at + bytes.readInt32LE(at))));
  return docs.sort((a, b) => compareValues(a._id, b._id));
}

function rollbackFiles(dir: string): string[] {
  const root = path.join(dir, 'rollback');
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((uuid) => readdirSync(path.join(root, uuid)).map((f) => `${uuid}/${f}`)).sort();
}

function uuidOf(coll: Collection): string {
  return coll.entry.uuid.toUUID().toString();
}

async function withMember(fn: (m: Member, reopen: () => Promise<Member>) => Promise<void> | void): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'docshard-rollback-'));
  const clock = new TestClock();
  let m = open(dir, clock);
  try {
    await fn(m, async () => {
      await m.storage.close();
      m = open(dir, clock);
      return m;
    });
  } finally {
    await m.storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('rollback without refetch: a member back at its common point', () => {
  it('undoes data and oplog after the common point, saves what it undid, raises the rollback id; after a restart it asks for a resync', () => withMember(async (first, reopen) => {
    let m = first;
    assert.equal(localReplStore(m.local).rollbackId(), 1);
    insert(m, 'db.c', { _id: 1, x: 1 }, { _id: 2, x: 2 }, { _id: 3, x: 3 });
    m.storage.createIndexes(m.storage.getCollection('db.c')!, [{ key: { x: 1 }, name: 'x_1' }]);
    localReplStore(m.local).writeLastVote({ term: 1, candidateIndex: 0 });
    const common = lastTs(m);
    const expected = dumpAt(m, common);

    replace(m, 'db.c', { _id: 1, x: 10 });
    m.storage.write((u) => assert.ok(u.removeById(m.storage.getCollection('db.c')!, 2)));
    // One unit, two changes: an applyOps entry.
    m.storage.write((u) => {
      const c = m.storage.getCollection('db.c')!;
      u.insert(c, { _id: 4, x: [4, 40] });
      const found = c.findById(u.kv, 3)!;
      u.update(c, found.recordId, deserializeDocument(found.bytes), found.bytes.length, { _id: 3, x: 30 });
    });
    insert(m, 'db.fresh', { _id: 'f' });
    m.storage.createIndexes(m.storage.getCollection('db.c')!, [{ key: { y: 1 }, name: 'y_1' }]);
    // The member's own vote, cast after the common point, is not rolled back.
    localReplStore(m.local).writeLastVote({ term: 2, candidateIndex: 1 });
    const c = m.storage.getCollection('db.c')!;
    const fresh = m.storage.getCollection('db.fresh')!;
    assert.equal(m.oplog.reads.entriesFrom(common).length, 7);

    const unchanged = dumpStore(m.storage);
    assert.deepEqual(rollBack(m, common, new Timestamp({ t: common.t, i: common.i + 1 })), {
      outcome: 'refused',
      reason: `common point Timestamp(${common.t}, ${common.i}) is before the majority commit point Timestamp(${common.t}, ${common.i + 1})`,
    });
    assert.deepEqual(dumpStore(m.storage), unchanged);
    assert.deepEqual(rollbackFiles(m.dir), []);

    const result = rollBack(m, common, common);
    assert.equal(result.outcome, 'rolledBack', JSON.stringify(result));
    assert.equal((result as { rollbackId: number }).rollbackId, 2);
    assert.equal((result as { undoneEntries: number }).undoneEntries, 6);
    assert.equal(localReplStore(m.local).rollbackId(), 2);

    assert.deepEqual(dumpStore(m.storage, localKept), expected, 'data, indexes, counts, catalog and oplog as at the common point');
    assert.equal(m.storage.getCollection('db.fresh'), undefined);
    assert.equal(c.index('y_1'), undefined);
    assert.equal(c.index('x_1')!.entry.multikey, false);
    assert.equal(m.storage.stats.get(c.entry.id).count, 3);
    assert.deepEqual(lastTs(m), common, 'the oplog ends at the common point');
    assert.deepEqual(localReplStore(m.local).readLastVote(), { term: 2, candidateIndex: 1 });

    const stamp = '2026-12-06T13-05-01.250';
    assert.deepEqual(rollbackFiles(m.dir), [`${uuidOf(c)}/removed.${stamp}.bson`, `${uuidOf(fresh)}/removed.${stamp}.bson`].sort());
    assert.deepEqual(readBsonFile(path.join(m.dir, 'rollback', uuidOf(c), `removed.${stamp}.bson`)), [{ _id: 1, x: 10 }, { _id: 3, x: 30 }, { _id: 4, x: [4, 40] }]);
    assert.deepEqual(readBsonFile(path.join(m.dir, 'rollback', uuidOf(fresh), `removed.${stamp}.bson`)), [{ _id: 'f' }]);

    // The member writes on from the common point, a new collection and index included.
    insert(m, 'db.c', { _id: 5, x: 5 });
    insert(m, 'db.fresh', { _id: 'g' });
    m.storage.createIndexes(m.storage.getCollection('db.c')!, [{ key: { y: 1 }, name: 'y_1' }]);
    assert.deepEqual([...m.storage.scanRecords(c)].map((r) => deserializeDocument(r.bytes)), [{ _id: 1, x: 1 }, { _id: 2, x: 2 }, { _id: 3, x: 3 }, { _id: 5, x: 5 }]);
    assert.equal(m.oplog.reads.entriesFrom(common).length, 5);

    // History is not kept across restarts: a rollback after one cannot be done without a resync.
    const second = lastTs(m);
    insert(m, 'db.c', { _id: 6, x: 6 });
    m = await reopen();
    const before = dumpStore(m.storage);
    const files = rollbackFiles(m.dir);
    const refused = rollBack(m, second, common);
    assert.equal(refused.outcome, 'needsResync');
    assert.match((refused as { reason: string }).reason, /does not reach back/);
    assert.deepEqual(dumpStore(m.storage), before);
    assert.deepEqual(rollbackFiles(m.dir), files);
    assert.equal(localReplStore(m.local).rollbackId(), 2);
  }));

  // A prepared transaction's commit at its commitTimestamp, logged behind entries written since
  // (carrying commitTimestamp), on the primary that wrote it and on a secondary that applied it: a
  // common point between the two is before the commit, which goes, writes and entry alike.
  it('undoes a prepared transaction\'s commit logged after the common point, though its writes are at a time before it', () => withMember(async (primary) => {
    insert(primary, 'db.c', { _id: 'prepared', v: 0 });
    const commitTimestamp = primary.clock.tick();
    insert(primary, 'db.c', { _id: 'later', v: 0 });
    const commonPoint = lastTs(primary);
    const before = dumpStore(primary.storage, localKept);
    primary.storage.write((u) => {
      u.commitAt(commitTimestamp);
      const coll = primary.storage.getCollection('db.c')!;
      const found = coll.findById(u.kv, 'prepared')!;
      u.update(coll, found.recordId, deserializeDocument(found.bytes), found.bytes.length, { _id: 'prepared', v: 1 });
    });
    const commit = primary.oplog.reads.entriesFrom(commonPoint).at(-1)!;
    assert.ok((commit.commitTimestamp as Timestamp).equals(commitTimestamp), 'the entry carries its commit time');
    assert.ok((commit.ts as Timestamp).greaterThan(commonPoint));
    const entries = primary.oplog.reads.entriesFrom(new Timestamp({ t: 0, i: 0 }));

    const secondaryDir = mkdtempSync(path.join(tmpdir(), 'docshard-rollback-'));
    const secondary = open(secondaryDir, new TestClock());
    try {
      const upTo = entries.findIndex((e) => (e.ts as Timestamp).greaterThan(commonPoint));
      secondary.oplog.applyOplogEntries(entries.slice(0, upTo));
      const secondaryBefore = dumpStore(secondary.storage, localKept);
      secondary.oplog.applyOplogEntries(entries.slice(upTo));
      for (const [m, expected] of [[primary, before], [secondary, secondaryBefore]] as const) {
        assert.equal(rollBack(m, commonPoint).outcome, 'rolledBack');
        assert.deepEqual(dumpStore(m.storage, localKept), expected);
        assert.ok(lastTs(m).equals(commonPoint), 'the oplog ends at the common point');
      }
    } finally {
      await secondary.storage.close();
      rmSync(secondaryDir, { recursive: true, force: true });
    }
  }));

  it('undoes a rename: the collection is back under its name, the same object', () => withMember((m) => {
    insert(m, 'db.a', { _id: 1 });
    const coll = m.storage.getCollection('db.a')!;
    const common = lastTs(m);
    const expected = dumpAt(m, common);
    m.storage.renameCollection('db.a', 'db.b');
    insert(m, 'db.b', { _id: 2 });
    assert.equal(rollBack(m, common).outcome, 'rolledBack');
    assert.deepEqual(dumpStore(m.storage, localKept), expected);
    assert.equal(m.storage.getCollection('db.a'), coll);
    assert.equal(m.storage.getCollection('db.b'), undefined);
    assert.equal(coll.ns, 'db.a');
    assert.deepEqual(readBsonFile(path.join(m.dir, 'rollback', uuidOf(coll), 'removed.2026-12-06T13-05-01.250.bson')), [{ _id: 2 }]);
  }));

  it('asks for a resync, changing nothing, when a collection was dropped after the common point', () => withMember((m) => {
    insert(m, 'db.c', { _id: 1 });
    insert(m, 'db.gone', { _id: 1 });
    const common = lastTs(m);
    insert(m, 'db.c', { _id: 2 });
    m.storage.dropCollection('db.gone');
    const before = dumpStore(m.storage);
    const result = rollBack(m, common);
    assert.deepEqual(result, { outcome: 'needsResync', reason: 'collection db.gone was dropped after the restore time' });
    assert.deepEqual(dumpStore(m.storage), before);
    assert.deepEqual(rollbackFiles(m.dir), []);
    assert.equal(localReplStore(m.local).rollbackId(), 1);
  }));
});
