import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import type { ChunkType } from '../catalog/type_chunk.js';
import { OwnershipFilter } from './ownership_filter.js';

function chunk(min: unknown, max: unknown, shard: string): ChunkType {
  const t = new Timestamp({ t: 1, i: 0 });
  return { _id: new ObjectId(), uuid: new UUID(), min: { k: min }, max: { k: max }, shard, lastmod: t, onCurrentShardSince: t, history: [] };
}

describe('the ownership filter', () => {
  const chunks = [chunk(new MinKey(), 10, 'a'), chunk(10, 20, 'b'), chunk(20, new MaxKey(), 'a')];

  it('owns the keys of its chunks, min inclusive and max exclusive', () => {
    const f = OwnershipFilter.of({ k: 1 }, chunks.filter((c) => c.shard === 'a'));
    assert.equal(f.ownsDocument({ k: 9 }), true);
    assert.equal(f.ownsDocument({ k: 10 }), false);
    assert.equal(f.ownsDocument({ k: 20 }), true);
    assert.equal(f.ownsDocument({}), true, 'a missing key is null, below 10');
  });

  it('knows when it owns the whole key space', () => {
    assert.equal(OwnershipFilter.of({ k: 1 }, chunks).ownsEverything(), true);
    assert.equal(OwnershipFilter.of({ k: 1 }, chunks.filter((c) => c.shard === 'a')).ownsEverything(), false);
    assert.equal(OwnershipFilter.of({ k: 1 }, []).ownsEverything(), false);
  });
});

describe('the ownership filter at a cluster time', () => {
  const ts = (t: number): Timestamp => new Timestamp({ t, i: 0 });
  const at = (min: unknown, max: unknown, history: [number, string][]): ChunkType => ({
    ...chunk(min, max, history[0]![1]), history: history.map(([t, shard]) => ({ validAfter: ts(t), shard })),
  });
  // [MinKey, 10) a since 5; [10, 20) a from 5, moved to b at 50; [20, MaxKey) merged on b at 70.
  const chunks = [at(new MinKey(), 10, [[5, 'a']]), at(10, 20, [[50, 'b'], [5, 'a']]), at(20, new MaxKey(), [[70, 'b']])];

  it('owns, at a time before a donation, the range it donated since', () => {
    const now = OwnershipFilter.forShard({ k: 1 }, chunks, 'a');
    assert.equal(now.ownsDocument({ k: 15 }), false);
    const before = now.atClusterTime(ts(40));
    assert.equal(before.ownsDocument({ k: 15 }), true);
    assert.equal(before.ownsDocument({ k: 5 }), true);
    assert.equal(before.overlaps({ k: 12 }, { k: 13 }), true);
    assert.equal(now.atClusterTime(ts(40)), before, 'the same time, the same filter');
  });

  it('does not own, at a time before it received a range, that range', () => {
    const b = OwnershipFilter.forShard({ k: 1 }, chunks, 'b');
    assert.equal(b.ownsDocument({ k: 15 }), true);
    assert.equal(b.atClusterTime(ts(60)).ownsDocument({ k: 15 }), true);
    assert.equal(b.atClusterTime(ts(40)).ownsDocument({ k: 15 }), false);
  });

  it('answers StaleChunkHistory (250) for a document of a chunk whose history does not reach back to the time', () => {
    const before = OwnershipFilter.forShard({ k: 1 }, chunks, 'a').atClusterTime(ts(40));
    assert.throws(() => before.ownsDocument({ k: 25 }), (err: unknown) => (err as { code?: number }).code === 250);
    assert.equal(before.ownsEverything(), false);
  });

  it('is itself at or after the last change of hands, and for a filter made from owned chunks alone', () => {
    const now = OwnershipFilter.forShard({ k: 1 }, chunks, 'a');
    assert.equal(now.atClusterTime(ts(70)), now);
    const plain = OwnershipFilter.of({ k: 1 }, chunks);
    assert.equal(plain.atClusterTime(ts(1)), plain);
  });
});
