import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import type { ChunkType } from '../catalog/type_chunk.js';
import { CriticalSection } from '../shard/critical_section.js';
import { OwnershipFilter } from '../shard/ownership_filter.js';
import { ShardMetadata } from '../shard/shard_metadata.js';
import { decideDeletionScope, ttlDeletionScopes, type ShardFacts } from './ttl_deletion_scope.js';
import { systemClock } from '../base/clock.js';

function chunk(min: unknown, max: unknown): ChunkType {
  const ts = new Timestamp({ t: 1, i: 0 });
  return { _id: new ObjectId(), uuid: new UUID(), min: { k: min }, max: { k: max }, shard: 's0', lastmod: ts, onCurrentShardSince: ts, history: [] } as unknown as ChunkType;
}

const shard: ShardFacts = { shardName: 's0', criticalSectionHeld: false, placement: { kind: 'unsharded' } };

describe('what the TTL monitor may delete', () => {
  it('is everything on a node outside a cluster and on an unsharded collection', () => {
    assert.deepEqual(decideDeletionScope({ ...shard, shardName: undefined, placement: { kind: 'unknown' } }), { scope: { kind: 'all' }, refresh: false });
    assert.deepEqual(decideDeletionScope(shard), { scope: { kind: 'all' }, refresh: false });
    const whole = OwnershipFilter.of({ k: 1 }, [chunk(new MinKey(), new MaxKey())]);
    assert.equal(decideDeletionScope({ ...shard, placement: { kind: 'sharded', ownership: whole } }).scope.kind, 'all');
  });

  it('is the owned documents of a sharded collection: orphans are the range deleter\'s', () => {
    const ownership = OwnershipFilter.of({ k: 1 }, [chunk(new MinKey(), 10)]);
    const { scope } = decideDeletionScope({ ...shard, placement: { kind: 'sharded', ownership } });
    assert.equal(scope.kind, 'owned');
    if (scope.kind !== 'owned') return;
    assert.deepEqual(scope.fields, ['k']);
    assert.equal(scope.owns({ _id: 1, k: 5 }), true);
    assert.equal(scope.owns({ _id: 2, k: 10 }), false);
  });

  it('is nothing while a critical section is held, the metadata is unknown or a migration is recovered', () => {
    assert.equal(decideDeletionScope({ ...shard, criticalSectionHeld: true }).scope.kind, 'skip');
    assert.deepEqual(decideDeletionScope({ ...shard, placement: { kind: 'unknown' } }), { scope: { kind: 'skip', reason: 'the filtering metadata is unknown' }, refresh: true });
    assert.deepEqual(decideDeletionScope({ ...shard, placement: { kind: 'recovering' } }).refresh, false);
  });

  it('asks a shard for the placement it has loaded and loads what it does not know, once at a time', async () => {
    let reads = 0;
    let answer!: () => void;
    const metadata = new ShardMetadata(() => 's0', () => ({
      readCollection: async () => {
        reads += 1;
        await new Promise<void>((resolve) => { answer = resolve; });
        return undefined;
      },
      readDatabase: async () => undefined,
    }));
    const criticalSection = new CriticalSection(systemClock);
    const scopeOf = ttlDeletionScopes({ role: 'shard', shardName: () => 's0', criticalSection, metadata, logger: pino({ level: 'silent' }) });
    assert.equal(scopeOf('db.c').kind, 'skip');
    assert.equal(scopeOf('db.c').kind, 'skip');
    assert.equal(reads, 1);
    answer();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(scopeOf('db.c').kind, 'all', 'the config server knows it as unsharded');
    criticalSection.enter('db');
    assert.equal(scopeOf('db.c').kind, 'skip', "the database's critical section (movePrimary) holds it too");
    const config = ttlDeletionScopes({ role: 'config', shardName: () => undefined, criticalSection, metadata, logger: pino({ level: 'silent' }) });
    assert.equal(config('db.c').kind, 'all');
  });
});
