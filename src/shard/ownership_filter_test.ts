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
