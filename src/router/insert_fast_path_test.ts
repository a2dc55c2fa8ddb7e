import { MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, MinKey, ObjectId, Timestamp, deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import type { ChunkType, DatabaseType } from '../catalog/type_chunk.js';
import { attachSequence } from '../command_layer/original_bytes.js';
import { encodeOpMsgRequest, parseOpMsg, readHeader } from '../wire/message.js';
import { OpCode } from '../wire/op_codes.js';
import { ChunkManager } from './chunk_manager.js';
import { planInsert } from './insert_fast_path.js';
import { statementIds } from '../sessions/retryable_write.js';
import { forwardableWrite } from './remote_cursor_stream.js';
import type { CachedRouting } from './routed_command.js';
import { encodeVersionedMessage, type Routing } from './versioned_request.js';
import { writeTimestamp } from '../sessions/logical_time_metadata.js';

// The insert planner against the general path: what it plans to send a shard must be what runWrite
// sends (forwardableWrite's fields, a retryable write's lsid and txnNumber among them, then the
// version, then the documents as received), and what it cannot plan so it declines.

const timestamp = new Timestamp({ t: 7, i: 1 });
const database: DatabaseType = { _id: 'db', primary: 's0', version: { uuid: new Binary(Buffer.alloc(16, 1), 4), timestamp, lastMod: 1 } };
const uuid = new Binary(Buffer.alloc(16, 9), 4);
// db.c sharded on {k: 1}: k < 100 on s0, the rest on s1.
const chunks: ChunkType[] = [[new MinKey(), 100, 's0'], [100, new MaxKey(), 's1']].map(([min, max, shard], i) => ({
  _id: new ObjectId(), uuid, min: { k: min }, max: { k: max }, shard: shard as string, lastmod: new Timestamp({ t: 1, i }), onCurrentShardSince: timestamp, history: [],
}));
const sharded: Routing = { ns: 'db.c', db: database, cm: ChunkManager.create({ _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key: { k: 1 }, unique: false }, chunks) };
const unsharded: Routing = { ns: 'db.u', db: database, cm: undefined };
const caches: CachedRouting = { routing: (ns) => (ns === 'db.c' ? sharded : ns === 'db.u' ? unsharded : undefined), isView: () => false };

const lsid = { id: new Binary(Buffer.alloc(16, 7), 4) };
const documents = [{ _id: 1, k: 5 }, { _id: 2, k: 7 }];

function message(cmd: Doc): Buffer {
  return encodeOpMsgRequest(serializeDocument(cmd), 42);
}

// The command a shard reads from a request (framed here as WireClient.forwardMessage frames it):
// its body, and its document sequence as that field.
function shardReads(request: Buffer): Doc {
  const framed = Buffer.from(request);
  framed.writeInt32LE(framed.length, 0);
  framed.writeInt32LE(OpCode.OP_MSG, 12);
  framed.writeUInt32LE(0, 16);
  framed[20] = 0;
  const parsed = parseOpMsg(readHeader(framed), framed);
  const cmd = deserializeDocument(parsed.body);
  for (const s of parsed.sequences) cmd[s.identifier] = s.documents.map(deserializeDocument);
  return cmd;
}

// runWrite's request for the same insert, as the message handler hands it the command: its
// documents a sequence, the rest decoded; a retryable write's batch with its statements' ids, as
// sendBatch adds them.
function generalRequest(cmd: Doc, routing: Routing, shard: string): Buffer {
  const { documents: docs, ...rest } = cmd;
  const decoded = deserializeDocument(serializeDocument(rest));
  const bytes = (docs as Doc[]).map((d) => serializeDocument(d));
  attachSequence(decoded, 'documents', bytes);
  const base = forwardableWrite(decoded, 'documents');
  const batch = base.txnNumber === undefined ? base : { ...base, stmtIds: statementIds(decoded, bytes.length) };
  return encodeVersionedMessage(routing, shard, 'db', batch, clusterTime, { identifier: 'documents', documents: bytes });
}

const clusterTime = new Timestamp({ t: 1_700_000_000, i: 7 });

// A plan's request once the router has written its time into it, as the fast path does.
function stamped(plan: { request: Buffer; clusterTimeAt: number }): Buffer {
  writeTimestamp(plan.request, plan.clusterTimeAt, clusterTime);
  return plan.request;
}

test("a retryable insert's plan sends the shard its lsid, txnNumber and stmtIds exactly as runWrite does", () => {
  const retryable = { insert: 'c', documents, ordered: true, lsid, txnNumber: Long.fromNumber(3), $db: 'db' };
  const plan = planInsert(message(retryable), caches);
  assert.ok(plan);
  assert.deepEqual([plan.shard, plan.requestId, plan.ns, plan.ordered], ['s0', 42, 'db.c', true]);
  const fast = shardReads(stamped(plan));
  const general = shardReads(generalRequest(retryable, sharded, 's0'));
  assert.deepEqual(fast, general);
  assert.deepEqual(Object.keys(fast), ['insert', 'documents', 'ordered', 'lsid', 'txnNumber', 'stmtIds', '$clusterTime', 'shardVersion', '$db']);
  assert.deepEqual(Object.keys(general), ['insert', 'ordered', 'lsid', 'txnNumber', 'stmtIds', '$clusterTime', 'shardVersion', '$db', 'documents']);
  assert.deepEqual(fast.stmtIds, [0, 1]);
  const many = Array.from({ length: 70 }, (_, i) => ({ _id: i, k: i }));
  assert.deepEqual(shardReads(planInsert(message({ ...retryable, documents: many }), caches)!.request).stmtIds, many.map((_, i) => i), 'a batch beyond the kept elements');
  // The generic arguments go to the entry every command passes: the lsid and $clusterTime as their bytes.
  assert.deepEqual(plan.generic, { lsid: serializeDocument(lsid), txnNumber: Long.fromNumber(3), $clusterTime: undefined });
  const gossiped = { clusterTime, signature: { hash: new Binary(Buffer.alloc(20), 0), keyId: Long.fromNumber(0) } };
  assert.deepEqual(planInsert(message({ ...retryable, $clusterTime: gossiped }), caches)!.generic.$clusterTime, serializeDocument(gossiped));
});

test("a plan sends the shard nothing of a session that is not a retryable write's, as runWrite", () => {
  for (const cmd of [{ insert: 'u', documents, lsid, $db: 'db' }, { insert: 'u', documents, $db: 'db' }, { insert: 'u', documents, ordered: false, lsid, $db: 'db' }]) {
    const plan = planInsert(message(cmd), caches);
    assert.ok(plan);
    assert.equal(plan.shard, 's0', 'unsharded: the primary shard');
    const fast = shardReads(stamped(plan));
    assert.deepEqual(fast, shardReads(generalRequest(cmd, unsharded, 's0')));
    assert.equal('lsid' in fast, false);
    assert.equal(plan.ordered, cmd.ordered !== false);
  }
});

test('a txnNumber without an lsid is planned as runWrite builds it, for the entry to refuse before anything is sent', () => {
  const cmd = { insert: 'c', documents, txnNumber: Long.fromNumber(1), $db: 'db' };
  const plan = planInsert(message(cmd), caches);
  assert.ok(plan);
  assert.deepEqual(plan.generic, { lsid: undefined, txnNumber: Long.fromNumber(1), $clusterTime: undefined });
  assert.deepEqual(shardReads(stamped(plan)), shardReads(generalRequest(cmd, sharded, 's0')));
});

test('what cannot go to one shard as received is declined', () => {
  const base = { insert: 'c', documents, ordered: true, lsid, txnNumber: Long.fromNumber(3), $db: 'db' };
  const declined: [string, Doc][] = [
    ['documents on two shards', { ...base, documents: [{ _id: 1, k: 5 }, { _id: 2, k: 500 }] }],
    ['a document without _id', { ...base, documents: [{ k: 5 }] }],
    ['no documents', { ...base, documents: [] }],
    ['routing not cached', { ...base, insert: 'other' }],
    ['the config database', { ...base, $db: 'config' }],
    ['autocommit', { ...base, autocommit: false }],
    ['maxTimeMS', { ...base, maxTimeMS: 10 }],
    ['a write concern', { ...base, writeConcern: { w: 2 } }],
    ['stmtIds', { ...base, stmtIds: [0, 1] }],
    ['a comment', { ...base, comment: 'x' }],
  ];
  for (const [what, cmd] of declined) assert.equal(planInsert(message(cmd), caches), undefined, what);
  assert.equal(planInsert(message({ find: 'c', filter: { k: 5 }, singleBatch: true, $db: 'db' }), caches), undefined, 'another command');
});
