import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Binary, ObjectId, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import type { ChunkType, CollectionType, ShardType } from '../catalog/type_chunk.js';
import { decideMoveOrUnshard, parseDestination, parseProvenance, type MoveFacts } from './move_collection_request.js';

const shard = (id: string, draining = false): ShardType => ({ _id: id, host: `${id}/h:1`, state: 1, topologyTime: new Timestamp({ t: 1, i: 0 }), ...(draining ? { draining } : {}) });
const collection = (unsplittable: boolean): CollectionType => ({
  _id: 'db.c', lastmodEpoch: new ObjectId(), lastmod: new Date(0), timestamp: new Timestamp({ t: 1, i: 0 }), uuid: new Binary(Buffer.alloc(16), 4),
  key: unsplittable ? { _id: 1 } : { x: 1 }, unique: false, ...(unsplittable ? { unsplittable } : {}),
});
const chunkOn = (s: string): ChunkType => ({ shard: s } as unknown as ChunkType);

function facts(over: Partial<MoveFacts>): MoveFacts {
  return { collection: collection(true), chunks: [chunkOn('s0')], shards: [shard('s0'), shard('s1'), shard('s2')], primaryShard: 's0', zones: [], ...over };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof MongoError) return e.codeName;
    throw e;
  }
  return 'none';
}

describe('decideMoveOrUnshard', () => {
  it('moves an unsplittable collection to one chunk on the destination, its donor the shard holding it', () => {
    const d = decideMoveOrUnshard('moveCollection', 'db.c', 's1', facts({}));
    assert.equal(d.kind, 'reshard');
    if (d.kind !== 'reshard') return;
    assert.deepEqual([d.donorShards, d.recipientShards, d.newChunks.map((c) => c.shard), d.zones], [['s0'], ['s1'], ['s1'], []]);
    assert.deepEqual(Object.keys(d.newChunks[0]!.min), ['_id']);
  });

  it('changes nothing when the collection is on the destination already', () => {
    assert.deepEqual(decideMoveOrUnshard('moveCollection', 'db.c', 's0', facts({})), { kind: 'noop' });
    assert.deepEqual(decideMoveOrUnshard('unshardCollection', 'db.c', 's0', facts({})), { kind: 'noop' });
    assert.deepEqual(decideMoveOrUnshard('unshardCollection', 'db.c', undefined, facts({})), { kind: 'noop' });
  });

  it('refuses as MongoDB 8.0 does', () => {
    assert.equal(code(() => decideMoveOrUnshard('moveCollection', 'db.c', 's1', facts({ collection: undefined, chunks: [] }))), 'NamespaceNotFound');
    assert.equal(code(() => decideMoveOrUnshard('moveCollection', 'db.c', 's1', facts({ collection: collection(false) }))), 'NamespaceNotFound');
    assert.equal(code(() => decideMoveOrUnshard('moveCollection', 'db.c', 'nope', facts({}))), 'ShardNotFound');
    assert.equal(code(() => decideMoveOrUnshard('unshardCollection', 'db.c', 's1', facts({ collection: undefined, chunks: [] }))), 'NamespaceNotFound');
    assert.equal(code(() => decideMoveOrUnshard('unshardCollection', 'db.c', 's1', facts({}))), 'NamespaceNotSharded');
    const zoned = facts({ collection: collection(false), zones: [{ tag: 'z', min: { x: 0 }, max: { x: 1 } }] });
    assert.equal(code(() => decideMoveOrUnshard('unshardCollection', 'db.c', 's1', zoned)), 'IllegalOperation');
  });

  it('unshards onto the named shard, or the least loaded that is not draining', () => {
    const sharded = { collection: collection(false), chunks: [chunkOn('s0'), chunkOn('s1')] };
    const named = decideMoveOrUnshard('unshardCollection', 'db.c', 's1', facts(sharded));
    assert.deepEqual(named.kind === 'reshard' && [named.donorShards, named.recipientShards], [['s0', 's1'], ['s1']]);
    const shardSizes = [{ id: 's0', dataSizeBytes: 50 }, { id: 's1', dataSizeBytes: 10 }, { id: 's2', dataSizeBytes: 5 }];
    const picked = decideMoveOrUnshard('unshardCollection', 'db.c', undefined, facts({ ...sharded, shards: [shard('s0'), shard('s1'), shard('s2', true)], shardSizes }));
    assert.deepEqual(picked.kind === 'reshard' && picked.recipientShards, ['s1']);
  });

  it('parses provenance and the one destination', () => {
    assert.equal(parseProvenance('moveCollection'), 'moveCollection');
    assert.equal(parseProvenance(undefined), undefined);
    assert.equal(code(() => parseProvenance('other')), 'BadValue');
    assert.equal(parseDestination([{ shard: 's1' }]), 's1');
    assert.equal(parseDestination(undefined), undefined);
    assert.equal(code(() => parseDestination([{ shard: 's1' }, { shard: 's2' }])), 'InvalidOptions');
  });
});
