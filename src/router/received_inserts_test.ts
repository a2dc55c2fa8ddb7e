import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BSON, MaxKey } from 'bson';
import { MongoError } from '../base/errors.js';
import { Binary, Double, Long, MinKey, ObjectId, Timestamp, deserializeDocument, serializeDocument, type Doc } from '../bson/values.js';
import type { ChunkType } from '../catalog/type_chunk.js';
import { attachSequence } from '../command_layer/original_bytes.js';
import { ChunkManager } from './chunk_manager.js';
import { receivedInserts, shardForReceivedInsert } from './received_inserts.js';
import { shardForInsert } from './targeter.js';

const uuid = new Binary(Buffer.alloc(16, 3), 4);
const timestamp = new Timestamp({ t: 5, i: 1 });

function manager(key: Doc, mins: Doc[]): ChunkManager {
  const fields = Object.keys(key);
  const max = Object.fromEntries(fields.map((f) => [f, new MaxKey()]));
  const chunks: ChunkType[] = mins.map((min, i) => ({
    _id: new ObjectId(), uuid, min, max: mins[i + 1] ?? max, shard: `s${i}`,
    lastmod: new Timestamp({ t: 1, i }), onCurrentShardSince: timestamp, history: [],
  }));
  return ChunkManager.create({ _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp, uuid, key, unique: false }, chunks);
}

function insertOf(docs: Buffer[]): Doc {
  const cmd: Doc = { insert: 'c', $db: 'db' };
  attachSequence(cmd, 'documents', docs);
  return cmd;
}

const single = manager({ k: 1 }, [{ k: new MinKey() }, { k: 0 }, { k: 10 }, { k: 'm' }]);
const dotted = manager({ 'a.b': 1 }, [{ 'a.b': new MinKey() }, { 'a.b': 0 }, { 'a.b': 10 }]);
const compound = manager({ k: 1, j: 1 }, [{ k: new MinKey(), j: new MinKey() }, { k: 5, j: 0 }, { k: 5, j: 'z' }, { k: 7, j: new MinKey() }]);
const hashed = manager({ k: 'hashed' }, [{ k: new MinKey() }, { k: Long.fromNumber(-3e18) }, { k: Long.ZERO }, { k: Long.fromNumber(3e18) }]);

const samples: Doc[] = [
  { _id: 1, k: -4 }, { _id: 2, k: 3 }, { _id: 3, k: 10 }, { _id: 4, k: new Double(9.5) }, { _id: 5, k: 'n' }, { _id: 6, k: 'a' },
  { _id: 7, k: Long.fromNumber(12) }, { _id: 8 }, { _id: 9, k: null }, { _id: 10, k: { x: 1 } }, { _id: 11, k: 5, j: -1 },
  { _id: 12, k: 5, j: 'q' }, { _id: 13, k: 5, j: 'zz' }, { _id: 14, k: 8, j: 1 }, { _id: 15, a: { b: 11 } }, { _id: 16, a: { b: -2 } },
  { _id: 17, a: 3 }, { _id: 18, a: { c: 1 } }, { _id: 19, j: 2, k: 6, pad: 'x'.repeat(50) },
];

test('a received insert targets the shard its decoded document targets, for every kind of key', () => {
  const cms = { single, dotted, compound, hashed };
  const spread = new Map<string, Set<string>>();
  for (const [name, cm] of Object.entries(cms)) {
    const docs = receivedInserts(insertOf(samples.map(serializeDocument)))!;
    for (const [i, received] of docs.entries()) {
      const expected = shardForInsert(cm, samples[i]!);
      assert.equal(shardForReceivedInsert(cm, received), expected, `${name}: ${JSON.stringify(samples[i])}`);
      (spread.get(name) ?? spread.set(name, new Set()).get(name)!).add(expected);
    }
  }
  // The samples reach more than one chunk of every table, so a wrong read of the key shows.
  for (const [name, shards] of spread) assert.ok(shards.size > 1, `${name} reached ${[...shards]}`);
});

test('a received insert with an array shard key fails as the decoded one does', () => {
  const [doc] = receivedInserts(insertOf([serializeDocument({ _id: 1, k: [1, 2] })]))!;
  assert.throws(() => shardForReceivedInsert(single, doc!), (err: unknown) => err instanceof MongoError && /array/.test(err.message));
});

test('a name held twice decodes to its last value', () => {
  // { _id: 1, k: 20, k: -5 }, which serializing an object cannot write
  const bytes = Buffer.concat([serializeDocument({ _id: 1, k: 20 }).subarray(0, -1), serializeDocument({ k: -5 }).subarray(4)]);
  bytes.writeInt32LE(bytes.length, 0);
  const [doc] = receivedInserts(insertOf([bytes]))!;
  assert.equal(shardForReceivedInsert(single, doc!), 's0');
});

test('a document without _id is given an ObjectId in front, the rest of its bytes unchanged', () => {
  const original = serializeDocument({ k: 3, name: 'n' });
  const [doc] = receivedInserts(insertOf([original]))!;
  const decoded = deserializeDocument(doc!.bytes);
  assert.deepEqual(Object.keys(decoded), ['_id', 'k', 'name']);
  assert.ok(decoded._id instanceof ObjectId);
  assert.deepEqual(doc!.bytes.subarray(doc!.bytes.length - original.length + 4), original.subarray(4));
  const kept = serializeDocument({ k: 3, _id: 'mine' });
  assert.equal(receivedInserts(insertOf([kept]))![0]!.bytes, kept, 'a document with _id is passed on as it came');
});

test('documents the fast reader declines leave the whole batch to decoding', () => {
  const plain = serializeDocument({ _id: 1, k: 1 });
  const twoIds = Buffer.concat([serializeDocument({ _id: 1 }).subarray(0, -1), serializeDocument({ _id: 2 }).subarray(4)]);
  twoIds.writeInt32LE(twoIds.length, 0);
  const dbref = Buffer.from(BSON.serialize({ _id: 2, r: { $ref: 'c', $id: 1 } }));
  assert.equal(receivedInserts(insertOf([plain, twoIds])), undefined, 'two _ids');
  assert.equal(receivedInserts(insertOf([plain, dbref])), undefined, "a '$' field name");
  assert.equal(receivedInserts({ insert: 'c', documents: [{ _id: 1 }], $db: 'db' }), undefined, 'decoded documents');
  assert.equal(receivedInserts(insertOf([plain]))!.length, 1);
});
