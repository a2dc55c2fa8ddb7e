import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BSON, MaxKey } from 'bson';
import { Binary, Decimal128, Double, Long, MinKey, ObjectId, Timestamp, serializeDocument, type Doc } from '../bson/values.js';
import { shardVersionToBSON } from '../catalog/chunk_version.js';
import type { ChunkType, DatabaseType } from '../catalog/type_chunk.js';
import { ChunkManager } from './chunk_manager.js';
import { completedCursorBytes } from './raw_reply.js';
import { numericPointShard, shardForInsert, shardsForQuery } from './targeter.js';
import { OP_MSG_REPLY_PREFIX, parseOpMsg, readHeader } from '../wire/message.js';
import { OpCode } from '../wire/op_codes.js';
import { encodeVersionedMessage, versionFields, type Routing } from './versioned_request.js';
import { clusterTimeMetadata } from '../sessions/logical_time_metadata.js';

// The router's single-shard find fast path: numeric targeting, the versioned command written into
// its message with cached version bytes, and the shard's completed cursor passed on as bytes.
// Each must answer exactly what the general path answers.

const uuid = new Binary(Buffer.alloc(16, 9), 4);
const timestamp = new Timestamp({ t: 7, i: 1 });

function manager(key: Doc, mins: unknown[], shards: (i: number) => string): ChunkManager {
  const field = Object.keys(key)[0]!;
  const chunks: ChunkType[] = mins.map((min, i) => ({
    _id: new ObjectId(),
    uuid,
    min: { [field]: min },
    max: { [field]: i + 1 < mins.length ? mins[i + 1] : new MaxKey() },
    shard: shards(i),
    lastmod: new Timestamp({ t: 1, i }),
    onCurrentShardSince: timestamp,
    history: [],
  }));
  return ChunkManager.create({ _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key, unique: false }, chunks);
}

function numericMins(n: number): unknown[] {
  // MinKey, then increasing numbers of every numeric kind a bound may have.
  const mins: unknown[] = [new MinKey()];
  let v = -5000;
  for (let i = 1; i < n; i++) {
    v += 1 + (i % 7);
    mins.push(i % 3 === 0 ? new Double(v + 0.5) : i % 5 === 0 ? Long.fromNumber(v) : v);
  }
  return mins;
}

test('numeric targeting agrees with key-string targeting (many blocks, every numeric kind)', () => {
  const cm = manager({ x: 1 }, numericMins(3000), (i) => `s${i % 4}`);
  const keys = [-Infinity, Infinity, -0, 0, -5000, -4999.5, 1e300, -1e300, Number.MIN_VALUE];
  for (let i = 0; i < 3000; i++) keys.push(Math.round((Math.random() - 0.5) * 20000) / 2);
  for (const k of keys) {
    const chunk = cm.findIntersectingChunk({ x: k });
    const expected = chunk.shard;
    assert.equal(cm.chunkForNumericKey(k), chunk, `key ${k}`);
    assert.equal(cm.shardForNumericKey(k), expected, `key ${k}`);
    assert.equal(numericPointShard(cm, { x: k }), expected);
    assert.equal(numericPointShard(cm, { x: new Double(k) }), expected);
    assert.equal(shardForInsert(cm, { _id: 1, x: k }), expected);
  }
});

test('bounds of other types or with -Infinity keep look-ups exact', () => {
  // A non-numeric bound turns the numeric path off (undefined) wherever it would be consulted.
  const mixed = manager({ x: 1 }, [new MinKey(), null, -Infinity, 0, 10, 'a', new Decimal128('5')].slice(0, 6), (i) => `s${i}`);
  for (const k of [-Infinity, -1, 0, 5, 10, 1e9, Infinity]) {
    const expected = mixed.findIntersectingChunk({ x: k }).shard;
    const fast = mixed.shardForNumericKey(k);
    assert.ok(fast === undefined || fast === expected, `key ${k}`);
    assert.deepEqual(shardsForQuery(mixed, { x: k }), new Set([expected]));
  }
  const infinite = manager({ x: 1 }, [new MinKey(), -Infinity, 0], (i) => `s${i}`);
  assert.equal(infinite.shardForNumericKey(-Infinity), 's1');
  assert.equal(infinite.shardForNumericKey(-1e308), 's1');
  assert.equal(infinite.shardForNumericKey(0), 's2');
  assert.equal(infinite.shardForNumericKey(NaN), undefined);
  const big = manager({ x: 1 }, [new MinKey(), Long.fromString('9007199254740993')], (i) => `s${i}`);
  assert.equal(big.shardForNumericKey(1), undefined);
});

test('only a lone numeric equality on an unhashed single-field key takes the numeric path', () => {
  const cm = manager({ x: 1 }, [new MinKey(), 0, 10], (i) => `s${i}`);
  assert.equal(numericPointShard(cm, { x: 5 }), 's1');
  assert.equal(numericPointShard(cm, { x: 5, y: 1 }), undefined);
  assert.equal(numericPointShard(cm, { x: { $eq: 5 } }), undefined);
  assert.equal(numericPointShard(cm, { x: 'a' }), undefined);
  assert.equal(numericPointShard(cm, { x: NaN }), undefined);
  const hashed = manager({ x: 'hashed' }, [new MinKey(), Long.fromNumber(0)], (i) => `s${i}`);
  assert.equal(numericPointShard(hashed, { x: 5 }), undefined);
  assert.deepEqual(shardsForQuery(hashed, { x: 5 }).size, 1);
});

const clusterTime = new Timestamp({ t: 1_700_000_000, i: 7 });

test('the versioned command written into its message is byte for byte the generic encoding', () => {
  const cm = manager({ x: 1 }, [new MinKey(), 0, 10], (i) => `s${i % 2}`);
  const db: DatabaseType = { _id: 'db', primary: 's0', version: { uuid: new Binary(Buffer.alloc(16, 1), 4), timestamp, lastMod: 1 } };
  const sharded: Routing = { ns: 'db.c', db, cm };
  const unsharded: Routing = { ns: 'db.c', db, cm: undefined };
  const cmd = { find: 'c', filter: { x: 5, s: 'é', d: new Double(1), l: Long.fromNumber(3), n: null, a: [1, { b: 2 }] }, limit: 1, singleBatch: true };
  for (const routing of [sharded, unsharded]) {
    for (const shard of ['s0', 's1']) {
      for (let i = 0; i < 2; i++) { // the second time from the cache
        const message = encodeVersionedMessage(routing, shard, 'db', cmd, clusterTime);
        assert.deepEqual(message.subarray(OP_MSG_REPLY_PREFIX), serializeDocument({ ...cmd, $clusterTime: clusterTimeMetadata(clusterTime), ...versionFields(routing, shard), $db: 'db' }));
      }
    }
  }
  assert.deepEqual(versionFields(sharded, 's1'), { shardVersion: shardVersionToBSON(cm.shardVersion('s1')) });
});

test('documents passed on as received follow the versioned body as one kind-1 section', () => {
  const cm = manager({ x: 1 }, [new MinKey(), 0, 10], (i) => `s${i % 2}`);
  const db: DatabaseType = { _id: 'db', primary: 's0', version: { uuid: new Binary(Buffer.alloc(16, 1), 4), timestamp, lastMod: 1 } };
  const routing: Routing = { ns: 'db.c', db, cm };
  const documents = [serializeDocument({ _id: 1, x: 'é' }), serializeDocument({ _id: 2, x: 12 })];
  for (const cmd of [{ insert: 'c', ordered: false }, { insert: 'c', $db: 'other' }]) {
    const message = encodeVersionedMessage(routing, 's1', 'db', cmd, clusterTime, { identifier: 'documents', documents });
    // What a request carries before the sections: the header and flags, then the body's kind byte.
    message.writeInt32LE(message.length, 0);
    message.writeInt32LE(OpCode.OP_MSG, 12);
    message.writeUInt32LE(0, 16);
    message[20] = 0;
    const parsed = parseOpMsg(readHeader(message), message);
    assert.deepEqual(parsed.body, serializeDocument({ ...cmd, $clusterTime: clusterTimeMetadata(clusterTime), ...versionFields(routing, 's1'), $db: 'db' }));
    assert.deepEqual(parsed.sequences, [{ identifier: 'documents', documents }]);
  }
});

function reply(doc: Doc): Buffer {
  return Buffer.from(BSON.serialize(doc));
}

test('a completed first batch is passed on as the cursor document, anything else is not', () => {
  const docs = [{ _id: 1, x: 5, s: 'é' }];
  const cursor = { firstBatch: docs, id: Long.ZERO, ns: 'db.c' };
  const ok = reply({ cursor, ok: 1, $clusterTime: { clusterTime: timestamp }, operationTime: timestamp });
  const bytes = completedCursorBytes(ok, 'db.c');
  assert.ok(bytes);
  assert.deepEqual(bytes, reply(cursor));
  assert.deepEqual(completedCursorBytes(reply({ cursor, ok: new Double(1) }), 'db.c'), reply(cursor));
  assert.deepEqual(completedCursorBytes(reply({ cursor: { ...cursor, ns: 'db.é' }, ok: 1 }), 'db.é'), reply({ ...cursor, ns: 'db.é' }));
  for (const other of [
    { cursor: { ...cursor, id: Long.fromNumber(12) }, ok: 1 }, // open cursor
    { cursor: { ...cursor, ns: 'db.d' }, ok: 1 }, // other namespace
    { cursor: { ...cursor, ns: 'db.cc' }, ok: 1 },
    { cursor: { ...cursor, atClusterTime: timestamp }, ok: 1 }, // another shape
    { cursor: { id: Long.ZERO, firstBatch: docs, ns: 'db.c' }, ok: 1 },
    { cursor, ok: 0, code: 13388, errmsg: 'stale' },
    { ok: 0, code: 13388, errmsg: 'stale' },
    { cursor: { ...cursor, id: 0 }, ok: 1 },
  ]) {
    assert.equal(completedCursorBytes(reply(other), 'db.c'), undefined, JSON.stringify(other));
  }
  const truncated = ok.subarray(0, ok.length - 3);
  assert.equal(completedCursorBytes(truncated, 'db.c'), undefined);
  const corrupt = Buffer.from(ok);
  corrupt.writeInt32LE(1 << 30, 4 + 1 + 'cursor'.length + 1);
  assert.equal(completedCursorBytes(corrupt, 'db.c'), undefined);
});
