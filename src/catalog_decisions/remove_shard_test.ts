import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, Timestamp } from 'bson';
import { MongoError } from '../base/errors.js';
import type { ShardType } from '../catalog/type_chunk.js';
import { decideRemoveShard, removeShardReply, resolveShard, type DrainingUsage } from './remove_shard.js';

const t = new Timestamp({ t: 1, i: 1 });
const shard = (id: string, draining = false): ShardType => ({ _id: id, host: `h:${id}`, state: 1, topologyTime: t, ...(draining ? { draining: true } : {}) });
const empty: DrainingUsage = { chunks: 0, jumboChunks: 0, databases: [] };

function code(n: number, message?: RegExp) {
  return (err: unknown) => err instanceof MongoError && err.code === n && (message === undefined || message.test(err.message));
}

describe('removeShard decisions', () => {
  it('starts draining on the first call, listing the databases to move but not local', () => {
    const d = decideRemoveShard({ shardIdOrHost: 's1', shards: [shard('s0'), shard('s1')], usage: { ...empty, databases: ['a', 'local'] } });
    assert.deepEqual(d, { kind: 'start', shard: 's1', dbsToMove: ['a'] });
    assert.deepEqual(removeShardReply(d), {
      msg: 'draining started successfully', state: 'started', shard: 's1', note: 'you need to drop or movePrimary these databases', dbsToMove: ['a'], ok: 1,
    });
  });

  it('starts even when the shard is already empty: completion takes another call', () => {
    assert.equal(decideRemoveShard({ shardIdOrHost: 's1', shards: [shard('s0'), shard('s1')], usage: empty }).kind, 'start');
  });

  it('reports what remains, as 64-bit counts, while chunks or databases are left', () => {
    const shards = [shard('s0'), shard('s1', true)];
    const d = decideRemoveShard({ shardIdOrHost: 's1', shards, usage: { chunks: 3, jumboChunks: 1, databases: ['a'] } });
    assert.equal(d.kind, 'ongoing');
    const reply = removeShardReply(d);
    assert.deepEqual(reply.remaining, { chunks: Long.fromNumber(3), dbs: Long.fromNumber(1), jumboChunks: Long.fromNumber(1) });
    assert.ok((reply.remaining as { chunks: unknown }).chunks instanceof Long);
    assert.deepEqual([reply.msg, reply.state, reply.dbsToMove], ['draining ongoing', 'ongoing', ['a']]);
    assert.equal(decideRemoveShard({ shardIdOrHost: 's1', shards, usage: { ...empty, databases: ['a'] } }).kind, 'ongoing');
    assert.equal(decideRemoveShard({ shardIdOrHost: 's1', shards, usage: { ...empty, chunks: 1 } }).kind, 'ongoing');
  });

  it('removes a drained shard, naming the first other shard as control shard', () => {
    const d = decideRemoveShard({ shardIdOrHost: 'h:s1', shards: [shard('s2'), shard('s1', true), shard('s0')], usage: empty });
    assert.deepEqual(d, { kind: 'remove', shard: 's1', controlShard: 's0' });
    assert.deepEqual(removeShardReply(d), { msg: 'removeshard completed successfully', state: 'completed', shard: 's1', ok: 1 });
  });

  it('refuses to remove the last shard that is not draining', () => {
    const last = code(20, /^Operation not allowed because it would remove the last shard$/);
    assert.throws(() => decideRemoveShard({ shardIdOrHost: 's0', shards: [shard('s0')], usage: empty }), last);
    assert.throws(() => decideRemoveShard({ shardIdOrHost: 's0', shards: [shard('s0'), shard('s1', true)], usage: empty }), last);
    assert.equal(decideRemoveShard({ shardIdOrHost: 's1', shards: [shard('s0'), shard('s1', true), shard('s2', true)], usage: empty }).kind, 'remove');
  });

  it('refuses to remove the only shard of a zone that has ranges (ZoneStillInUse)', () => {
    const zoned = (id: string, tags: string[], draining = false): ShardType => ({ ...shard(id, draining), tags });
    const inUse = code(163, /^Operation not allowed because it would remove the only shard for zone z which has a chunk range is associated with it$/);
    assert.throws(() => decideRemoveShard({ shardIdOrHost: 's1', shards: [shard('s0'), zoned('s1', ['z'])], usage: empty, zonesWithRanges: ['z'] }), inUse);
    assert.throws(() => decideRemoveShard({ shardIdOrHost: 's1', shards: [shard('s0'), zoned('s1', ['z'], true)], usage: empty, zonesWithRanges: ['z'] }), inUse);
    assert.equal(decideRemoveShard({ shardIdOrHost: 's1', shards: [shard('s0'), zoned('s1', ['z'])], usage: empty, zonesWithRanges: [] }).kind, 'start');
    assert.equal(decideRemoveShard({ shardIdOrHost: 's1', shards: [zoned('s0', ['z']), zoned('s1', ['z'])], usage: empty, zonesWithRanges: ['z'] }).kind, 'start');
  });

  it('answers ShardNotFound for an unknown shard name or host', () => {
    assert.throws(() => resolveShard([shard('s0')], 'nope'), code(70, /^Shard nope not found$/));
    assert.throws(() => decideRemoveShard({ shardIdOrHost: 'nope', shards: [shard('s0'), shard('s1')], usage: empty }), code(70));
  });
});
