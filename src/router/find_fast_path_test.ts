import { MaxKey } from 'bson';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, Long, MinKey, ObjectId, Timestamp, deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import type { ChunkType, DatabaseType } from '../catalog/type_chunk.js';
import { encodeOpMsgRequest, OP_MSG_REPLY_PREFIX } from '../wire/message.js';
import { ChunkManager } from './chunk_manager.js';
import { planFind } from './find_fast_path.js';
import { planFindMerge } from './merge/find_merge.js';
import { forwardable } from './remote_cursor_stream.js';
import type { CachedRouting } from './routed_command.js';
import { encodeVersionedMessage, type Routing } from './versioned_request.js';
import { writeTimestamp } from '../sessions/logical_time_metadata.js';

// The point-read planner against the general path: what it plans to send a shard must be what
// clusterFindCommand's single-shard find sends (its session stays with the router), and what it
// cannot plan so it declines.

const timestamp = new Timestamp({ t: 7, i: 1 });
const database: DatabaseType = { _id: 'db', primary: 's0', version: { uuid: new Binary(Buffer.alloc(16, 1), 4), timestamp, lastMod: 1 } };
const uuid = new Binary(Buffer.alloc(16, 9), 4);
// db.c sharded on {k: 1}: k < 100 on s0, the rest on s1.
const chunks: ChunkType[] = [[new MinKey(), 100, 's0'], [100, new MaxKey(), 's1']].map(([min, max, shard], i) => ({
  _id: new ObjectId(), uuid, min: { k: min }, max: { k: max }, shard: shard as string, lastmod: new Timestamp({ t: 1, i }), onCurrentShardSince: timestamp, history: [],
}));
const sharded: Routing = { ns: 'db.c', db: database, cm: ChunkManager.create({ _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key: { k: 1 }, unique: false }, chunks) };
const unsharded: Routing = { ns: 'db.u', db: database, cm: undefined };
const caches: CachedRouting = { routing: (ns) => (ns === 'db.c' ? sharded : ns === 'db.u' || ns === 'db.v' ? unsharded : undefined), isView: (ns) => ns === 'db.v' };

const lsid = { id: new Binary(Buffer.alloc(16, 7), 4) };

function message(cmd: Doc): Buffer {
  return encodeOpMsgRequest(serializeDocument(cmd), 42);
}

// clusterFindCommand's request to the one shard: the client's command without the router's
// fields, planned for the merge, with the router's time and the version.
const clusterTime = new Timestamp({ t: 1_700_000_000, i: 7 });

function generalRequest(cmd: Doc, routing: Routing, shard: string): Buffer {
  return encodeVersionedMessage(routing, shard, 'db', planFindMerge(forwardable(deserializeDocument(serializeDocument(cmd)))).shardCommand, clusterTime);
}

test("a point read's plan is the general path's request to its shard, its session left with the router", () => {
  const cases: [Doc, Routing, string][] = [
    [{ find: 'c', filter: { k: 5 }, limit: 1, singleBatch: true, lsid, $clusterTime: { clusterTime: timestamp }, $db: 'db' }, sharded, 's0'],
    [{ find: 'c', filter: { k: 150.5 }, limit: 1, batchSize: 1, singleBatch: true, lsid, $db: 'db' }, sharded, 's1'],
    [{ find: 'u', filter: { name: 'x', n: { $gt: 1 } }, singleBatch: true, $db: 'db' }, unsharded, 's0'],
  ];
  for (const [cmd, routing, shard] of cases) {
    const plan = planFind(message(cmd), caches);
    assert.ok(plan, JSON.stringify(cmd.filter));
    assert.deepEqual([plan.shard, plan.ns, plan.requestId], [shard, routing.ns, 42]);
    // The router writes its time once the command has entered.
    writeTimestamp(plan.request, plan.clusterTimeAt, clusterTime);
    assert.deepEqual(plan.request.subarray(OP_MSG_REPLY_PREFIX), generalRequest(cmd, routing, shard).subarray(OP_MSG_REPLY_PREFIX));
    assert.deepEqual(plan.generic, { lsid: cmd.lsid === undefined ? undefined : serializeDocument(lsid), $clusterTime: cmd.$clusterTime === undefined ? undefined : serializeDocument(cmd.$clusterTime as Doc) });
  }
});

test('what is not a point read on one shard is declined', () => {
  const base = { find: 'c', filter: { k: 5 }, limit: 1, singleBatch: true, lsid, $db: 'db' };
  const declined: [string, Doc][] = [
    ['not singleBatch', { ...base, singleBatch: false }],
    ['a range', { ...base, filter: { k: { $gte: 5 } } }],
    ['a key of another type', { ...base, filter: { k: Long.fromNumber(5) } }],
    ['a negative limit', { ...base, limit: -1 }],
    ['a view', { ...base, find: 'v' }],
    ['routing not cached', { ...base, find: 'other' }],
    ['a txnNumber', { ...base, txnNumber: Long.fromNumber(1) }],
    ['maxTimeMS', { ...base, maxTimeMS: 10 }],
    ['a projection', { ...base, projection: { _id: 1 } }],
    ['the admin database', { ...base, $db: 'admin' }],
  ];
  for (const [what, cmd] of declined) assert.equal(planFind(message(cmd), caches), undefined, what);
});
