import { MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, MinKey, ObjectId, Timestamp, deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import type { ChunkType, DatabaseType } from '../catalog/type_chunk.js';
import { encodeOpMsgRequest, parseOpMsg, readHeader } from '../wire/message.js';
import { OpCode } from '../wire/op_codes.js';
import { ChunkManager } from './chunk_manager.js';
import { planUpdate } from './update_fast_path.js';
import { forwardableWrite } from './remote_cursor_stream.js';
import type { CachedRouting } from './routed_command.js';
import { encodeVersionedMessage, type Routing } from './versioned_request.js';
import { writeTimestamp } from '../sessions/logical_time_metadata.js';

// The update planner against the general path: what it plans to send a shard must be what runWrite
// sends for a one-statement update (forwardableWrite's fields, a retryable write's lsid, txnNumber
// and stmtIds among them, then the version), and what it cannot plan so it declines.

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
const clusterTime = new Timestamp({ t: 1_700_000_000, i: 7 });

function message(cmd: Doc): Buffer {
  return encodeOpMsgRequest(serializeDocument(cmd), 42);
}

// The command a shard reads from a request (framed here as WireClient.forwardMessage frames it).
function shardReads(request: Buffer): Doc {
  const framed = Buffer.from(request);
  framed.writeInt32LE(framed.length, 0);
  framed.writeInt32LE(OpCode.OP_MSG, 12);
  framed.writeUInt32LE(0, 16);
  framed[20] = 0;
  return deserializeDocument(parseOpMsg(readHeader(framed), framed).body);
}

// runWrite's request for the same update: forwardableWrite's fields, a retryable write's
// statement id as sendBatch adds it, the statement.
function generalRequest(cmd: Doc, routing: Routing, shard: string): Buffer {
  const decoded = deserializeDocument(serializeDocument(cmd));
  const base = forwardableWrite(decoded, 'updates');
  const batch = base.txnNumber === undefined ? base : { ...base, stmtIds: [0] };
  return encodeVersionedMessage(routing, shard, 'db', { ...batch, updates: decoded.updates }, clusterTime);
}

function stamped(plan: { request: Buffer; clusterTimeAt: number }): Buffer {
  writeTimestamp(plan.request, plan.clusterTimeAt, clusterTime);
  return plan.request;
}

test("an updateOne's plan sends its shard what runWrite sends, a retryable one's lsid, txnNumber and stmtIds included", () => {
  const cases: [Doc, Routing, string][] = [
    [{ update: 'c', updates: [{ q: { k: 5 }, u: { $inc: { n: 1 } } }], ordered: true, lsid, txnNumber: Long.fromNumber(3), $db: 'db' }, sharded, 's0'],
    [{ update: 'c', updates: [{ q: { k: 150.5 }, u: { $set: { 'a.b': 'x' } }, upsert: true, multi: false }], ordered: false, lsid, $db: 'db' }, sharded, 's1'],
    [{ update: 'c', updates: [{ q: { k: 7 }, u: { k: 7, replaced: true } }], $db: 'db' }, sharded, 's0'],
    [{ update: 'u', updates: [{ q: { name: 'x', n: 2 }, u: { $unset: { y: '' } } }], lsid, $db: 'db' }, unsharded, 's0'],
  ];
  for (const [cmd, routing, shard] of cases) {
    const plan = planUpdate(message(cmd), caches);
    assert.ok(plan, JSON.stringify(cmd.updates));
    assert.deepEqual([plan.shard, plan.ns, plan.requestId, plan.ordered], [shard, routing.ns, 42, cmd.ordered !== false]);
    const fast = shardReads(stamped(plan));
    assert.deepEqual(fast, shardReads(generalRequest(cmd, routing, shard)));
    assert.equal('stmtIds' in fast, cmd.txnNumber !== undefined);
    assert.equal('lsid' in fast, cmd.txnNumber !== undefined, "a session that is not a retryable write's stays with the router");
    const statement = (cmd.updates as Doc[])[0]!;
    assert.equal(plan.updateBytes, serializeDocument(statement.u as Doc).length, 'what auto-splitting counts');
    assert.equal(plan.chunk?.shard, routing.cm === undefined ? undefined : shard);
  }
});

test('what is not one update by shard key on one shard is declined', () => {
  const statement = { q: { k: 5 }, u: { $inc: { n: 1 } } };
  const base = { update: 'c', updates: [statement], ordered: true, lsid, txnNumber: Long.fromNumber(3), $db: 'db' };
  const declined: [string, Doc][] = [
    ['two statements', { ...base, updates: [statement, statement] }],
    ['no statement', { ...base, updates: [] }],
    ['a range', { ...base, updates: [{ ...statement, q: { k: { $gte: 5 } } }] }],
    ['no shard key', { ...base, updates: [{ ...statement, q: { _id: 5 } }] }],
    ['a key of another type', { ...base, updates: [{ ...statement, q: { k: Long.fromNumber(5) } }] }],
    ['multi', { ...base, updates: [{ ...statement, multi: true }] }],
    ['a pipeline', { ...base, updates: [{ ...statement, u: [{ $set: { n: 1 } }] }] }],
    ['arrayFilters', { ...base, updates: [{ ...statement, arrayFilters: [{ x: 1 }] }] }],
    ['a collation', { ...base, updates: [{ ...statement, collation: { locale: 'fr' } }] }],
    ['a hint', { ...base, updates: [{ ...statement, hint: { k: 1 } }] }],
    ['a sort', { ...base, updates: [{ ...statement, sort: { k: 1 } }] }],
    ['an unknown field in the statement', { ...base, updates: [{ ...statement, bogus: 1 }] }],
    ['an operator over a $-prefixed field', { ...base, updates: [{ ...statement, u: { $set: { $x: 1 } } }] }],
    ['routing not cached', { ...base, update: 'other' }],
    ['the config database', { ...base, $db: 'config' }],
    ['autocommit', { ...base, autocommit: false }],
    ['maxTimeMS', { ...base, maxTimeMS: 10 }],
    ['a write concern', { ...base, writeConcern: { w: 2 } }],
    ['let', { ...base, let: { x: 1 } }],
    ['bypassDocumentValidation', { ...base, bypassDocumentValidation: true }],
    ['a comment', { ...base, comment: 'x' }],
  ];
  for (const [what, cmd] of declined) assert.equal(planUpdate(message(cmd), caches), undefined, what);
  assert.equal(planUpdate(message({ insert: 'c', documents: [{ _id: 1, k: 5 }], $db: 'db' }), caches), undefined, 'another command');
});
