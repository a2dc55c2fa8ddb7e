import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Long, Timestamp, UUID } from 'bson';
import type { ShardServices } from '../mongod_commands/command.js';
import { systemClock } from '../base/clock.js';
import { compareValues } from '../bson/compare.js';
import { deserializeDocument, type Doc } from '../bson/values.js';
import { openMongodPorts } from '../process/mongod_ports.js';
import type { RunningNode } from '../process/mongod_server.js';
import { startShard } from '../process/shard_process.js';
import { DEFAULT_PARAMETERS } from '../process/set_parameter.js';
import { dispatchCommand } from '../mongod_commands/dispatcher.js';
import { LogicalClock } from '../sessions/logical_clock.js';
import { StorageEngine } from '../storage/storage_engine.js';
import { equalities } from '../storage/test_support.js';
import { enableOplog, type ReplicatedOplog } from './replicated_oplog.js';
import { OPLOG_NS } from './oplog_entry.js';
import { RawDocument } from '../wire/raw_bson.js';

const conn = { id: 1, remote: 'test', local: 'test' };

// Everything a node holds outside the local database: collections (uuid, options, indexes) and
// their documents (a capped collection's in natural order, others by _id).
function contents(storage: StorageEngine): Doc[] {
  return storage.listCollections().filter((c) => !c.ns.startsWith('local.')).sort((a, b) => a.ns.localeCompare(b.ns)).map((c) => {
    const docs = [...storage.scanRecords(c)].map((r) => deserializeDocument(r.bytes));
    if (c.capped === undefined) docs.sort((x, y) => compareValues(x._id, y._id));
    return { ns: c.ns, uuid: c.entry.uuid.toString('hex'), options: c.entry.options, indexes: c.indexes.map((i) => i.entry.spec), docs };
  });
}

const ZERO = new Timestamp({ t: 0, i: 0 });

// A reply's batch as documents (a node hands out stored documents as their bytes).
function batch(reply: Doc, field: 'firstBatch' | 'nextBatch'): Doc[] {
  return ((reply.cursor as Doc)[field] as unknown[]).map((d) => (d instanceof RawDocument ? deserializeDocument(d.bytes) : (d as Doc)));
}

describe('the oplog of a primary applied to a secondary', () => {
  let node: RunningNode<ShardServices>;
  let primaryOplog: ReplicatedOplog;
  let secondary: StorageEngine;
  let secondaryOplog: ReplicatedOplog;
  const dirs: string[] = [];
  const tempDir = (): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'docshard-oplog-'));
    dirs.push(dir);
    return dir;
  };

  async function run(db: string, cmd: Doc): Promise<Doc> {
    const reply = await dispatchCommand(node.services, conn, { ...cmd, $db: db });
    assert.equal(reply.ok, 1, JSON.stringify(reply));
    assert.equal(reply.writeErrors, undefined, JSON.stringify(reply));
    return reply;
  }

  before(async () => {
    const options = { role: 'shard' as const, port: 0, bindIp: '127.0.0.1', dbpath: tempDir(), enableTestCommands: false, maxConns: 1_000_000, parameters: DEFAULT_PARAMETERS };
    node = await startShard(options, await openMongodPorts(options, pino({ level: 'silent' }), [], systemClock));
    primaryOplog = enableOplog(node.services.storage, { term: () => 3, checkCanWrite: () => undefined, clock: node.services.clock });
    const clock = new LogicalClock(() => Date.now());
    secondary = StorageEngine.open(tempDir(), { compilePartialFilter: equalities, clock });
    secondaryOplog = enableOplog(secondary, { term: () => 3, checkCanWrite: () => assert.fail('a secondary applying entries writes nothing of its own'), clock });
  });

  after(async () => {
    await node.stop();
    await secondary.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('holds what the primary holds after applying its oplog, and the same again after applying it twice', async () => {
    await run('app', { insert: 'users', documents: [{ _id: 1, a: 1 }] });
    await run('app', { insert: 'users', documents: [{ _id: 2, a: 2 }, { _id: 3, a: 3 }, { _id: 4, a: 4 }, { _id: 5, a: 5 }] });
    await run('app', { update: 'users', updates: [{ q: { _id: 1 }, u: { $inc: { a: 5 } } }] });
    await run('app', { update: 'users', updates: [{ q: { _id: 10 }, u: { $set: { b: 1 } }, upsert: true }] });
    await run('app', { update: 'users', updates: [{ q: {}, u: { $set: { m: true } }, multi: true }] });
    await run('app', { delete: 'users', deletes: [{ q: { _id: 3 }, limit: 1 }] });
    await run('app', { createIndexes: 'users', indexes: [{ key: { a: 1 }, name: 'a_1' }, { key: { b: 1 }, name: 'b_1', unique: true, sparse: true }] });
    await run('app', { collMod: 'users', validator: { a: { $gte: 0 } }, validationLevel: 'moderate' });
    await run('app', { collMod: 'users', index: { name: 'a_1', hidden: true } });
    await run('app', { collMod: 'users', index: { name: 'a_1', expireAfterSeconds: 100 } });
    await run('app', { dropIndexes: 'users', index: 'b_1' });
    await run('app', { create: 'capped', capped: true, size: 4096, max: 3 });
    for (let i = 0; i < 5; i++) await run('app', { insert: 'capped', documents: [{ _id: i, x: 'y'.repeat(10) }] });
    await run('app', { create: 'old' });
    await run('app', { insert: 'old', documents: [{ _id: 'o' }] });
    await run('admin', { renameCollection: 'app.old', to: 'app.renamed' });
    await run('app', { insert: 'renamed', documents: [{ _id: 'after rename' }] });
    await run('app', { create: 'gone' });
    await run('app', { drop: 'gone' });
    await run('other', { insert: 'x', documents: [{ _id: 1 }] });
    await run('other', { dropDatabase: 1 });
    const retrying = { id: new UUID() };
    await run('app', { insert: 'users', documents: [{ _id: 20, a: 20 }], lsid: retrying, txnNumber: Long.fromNumber(1) });
    await run('app', { update: 'users', updates: [{ q: { _id: 20 }, u: { $inc: { a: 1 } } }, { q: { _id: 2 }, u: { $inc: { a: 1 } } }], lsid: retrying, txnNumber: Long.fromNumber(2) });
    const transacting = { id: new UUID() };
    const txn = { lsid: transacting, txnNumber: Long.fromNumber(1), autocommit: false };
    await run('app', { insert: 'users', documents: [{ _id: 30, a: 30 }], ...txn, startTransaction: true });
    await run('app', { update: 'users', updates: [{ q: { _id: 4 }, u: { $inc: { a: 10 } } }], ...txn });
    await run('admin', { commitTransaction: 1, ...txn });

    const entries = primaryOplog.reads.entriesFrom(ZERO);
    const ops = entries.map((e) => (e.op === 'c' ? Object.keys(e.o as Doc)[0] : e.op));
    for (const expected of ['create', 'i', 'applyOps', 'u', 'd', 'createIndexes', 'collMod', 'dropIndexes', 'renameCollection', 'drop', 'dropDatabase']) {
      assert.ok(ops.includes(expected), `no ${expected} entry in ${JSON.stringify(ops)}`);
    }
    assert.equal(ops.filter((o) => o === 'createIndexes').length, 2);
    for (let i = 1; i < entries.length; i++) assert.ok((entries[i]!.ts as Timestamp).greaterThan(entries[i - 1]!.ts as Timestamp), `entry ${i} is not after the one before`);
    assert.ok(entries.every((e) => Number(e.t) === 3 && Number(e.v) === 2 && e.wall instanceof Date));

    const retryable = entries.filter((e) => e.lsid !== undefined && compareValues((e.lsid as Doc).id, retrying.id) === 0);
    assert.equal(retryable.length, 2);
    assert.equal(retryable[0]!.stmtId, 0);
    assert.deepEqual(retryable[1]!.stmtId, [0, 1]);
    assert.equal(Number(retryable[1]!.txnNumber), 2);
    const commit = entries.find((e) => e.lsid !== undefined && compareValues((e.lsid as Doc).id, transacting.id) === 0)!;
    assert.equal(commit.op, 'c');
    assert.ok(Array.isArray((commit.o as Doc).applyOps));
    assert.equal(Number((commit.prevOpTime as Doc).t), -1);

    const onPrimary = contents(node.services.storage);
    assert.ok(onPrimary.some((c) => c.ns === 'config.transactions' && (c.docs as Doc[]).length === 2));
    secondaryOplog.applyOplogEntries(entries);
    assert.deepEqual(contents(secondary), onPrimary);
    assert.deepEqual(secondaryOplog.reads.entriesFrom(ZERO), entries, 'the secondary logs each applied entry verbatim and nothing else');

    secondaryOplog.applyOplogEntries(entries);
    assert.deepEqual(contents(secondary), onPrimary);
    assert.deepEqual(secondaryOplog.reads.entriesFrom(ZERO), entries);
  });

  it('lists local.oplog.rs as a capped collection without an _id index', async () => {
    const reply = await run('local', { listCollections: 1, filter: { name: 'oplog.rs' } });
    const [info] = batch(reply, 'firstBatch');
    assert.deepEqual(info!.options, { capped: true, size: 1024 * 1024 * 1024, autoIndexId: false });
    assert.equal(info!.idIndex, undefined);
  });

  it('answers a find on local.oplog.rs from a ts by seeking to it, tailable and awaitData included', async () => {
    const { storage } = node.services;
    const coll = storage.getCollection(OPLOG_NS)!;
    const entries = primaryOplog.reads.entriesFrom(ZERO);
    const from = entries[10]!.ts as Timestamp;
    const starts: number[] = [];
    // The ts of the entry the first scan of the oplog started at.
    const startedAt = (): Timestamp => {
      assert.ok(starts.length > 0, 'the oplog is read by a scan from a record id');
      return deserializeDocument(storage.getRecord(coll, starts[0]!)!).ts as Timestamp;
    };
    const scanRecordsFrom = storage.scanRecordsFrom.bind(storage);
    storage.scanRecordsFrom = (c, recordId) => {
      if (c === coll) starts.push(recordId);
      return scanRecordsFrom(c, recordId);
    };
    try {
      const plain = await run('local', { find: 'oplog.rs', filter: { ts: { $gte: from } }, batchSize: 1000 });
      assert.deepEqual(batch(plain, 'firstBatch'), entries.slice(10));
      assert.ok(startedAt().equals(from), 'the scan starts at the entry sought');
      const after = await run('local', { find: 'oplog.rs', filter: { ts: { $gt: from } }, batchSize: 1000 });
      assert.deepEqual(batch(after, 'firstBatch'), entries.slice(11));

      starts.length = 0;
      const tail = await run('local', { find: 'oplog.rs', filter: { ts: { $gte: entries.at(-1)!.ts } }, tailable: true, awaitData: true });
      const cursor = tail.cursor as Doc;
      assert.deepEqual(batch(tail, 'firstBatch'), [entries.at(-1)]);
      assert.ok(startedAt().equals(entries.at(-1)!.ts as Timestamp), 'the tailable scan starts at the entry sought');
      await run('app', { insert: 'users', documents: [{ _id: 'tailed', a: 1 }] });
      const more = await run('local', { getMore: cursor.id, collection: 'oplog.rs', maxTimeMS: 1000 });
      const next = batch(more, 'nextBatch');
      assert.equal(next.length, 1);
      assert.deepEqual(next[0]!.o, { _id: 'tailed', a: 1 });
      await run('local', { killCursors: 'oplog.rs', cursors: [cursor.id] });
    } finally {
      storage.scanRecordsFrom = scanRecordsFrom;
    }
  });
});
