import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Long, MaxKey, MinKey } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { balancerSuite, chunksOf, waitFor } from '../helpers/balancer_util.js';

// Zones and the balancer (jstests zone_changes_range, zone_changes_hashed,
// add_and_remove_shard_from_zone, in our own words): chunks go to their zone's shards, and move
// again when a range or a shard's zones change.
describe('balancer and zones', () => {
  const ctx = balancerSuite();

  // Every chunk whose range lies in a zone range is on a shard of that zone.
  async function placement(ns: string): Promise<{ min: unknown; shard: string }[]> {
    return (await chunksOf(ctx.config, ns)).map((c) => ({ min: c.min.x, shard: c.shard }));
  }

  // `boundaries`: chunk minimums the balancer must have split at first (before its splits, the one
  // chunk starting at MinKey already passes a check of numeric minimums alone).
  async function waitForPlacement(ns: string, expected: (chunk: AnyDoc) => string | string[] | undefined, boundaries: readonly number[] = []): Promise<void> {
    await waitFor(`${ns} chunks on their zones' shards`, async () => {
      const chunks = await chunksOf(ctx.config, ns);
      return boundaries.every((b) => chunks.some((c) => c.min.x === b)) && chunks.every((c) => {
        const want = expected(c);
        return want === undefined || (Array.isArray(want) ? want.includes(c.shard) : c.shard === want);
      });
    }, 90_000);
  }

  it('moves chunks to their zone, splitting chunks that straddle a boundary, and follows range changes', { timeout: 180_000 }, async () => {
    await ctx.admin.command({ enableSharding: 'zr', primaryShard: 'shard0' });
    await ctx.admin.command({ shardCollection: 'zr.c', key: { x: 1 } });
    const coll = ctx.client.db('zr').collection<AnyDoc>('c');
    await coll.insertMany(Array.from({ length: 400 }, (_, i) => ({ x: i - 100 })));
    await ctx.admin.command({ addShardToZone: 'shard1', zone: 'A' });
    await ctx.admin.command({ addShardToZone: 'shard2', zone: 'B' });
    await ctx.admin.command({ updateZoneKeyRange: 'zr.c', min: { x: 0 }, max: { x: 100 }, zone: 'A' });
    await ctx.admin.command({ updateZoneKeyRange: 'zr.c', min: { x: 100 }, max: { x: 200 }, zone: 'B' });
    const zoneOf = (c: AnyDoc): string | undefined => {
      const min = c.min.x;
      if (typeof min !== 'number') return undefined;
      if (min >= 0 && min < 100) return 'shard1';
      if (min >= 100 && min < 200) return 'shard2';
      return undefined;
    };
    await waitForPlacement('zr.c', zoneOf, [0, 100, 200]);
    const chunks = await placement('zr.c');
    assert.ok(chunks.some((c) => c.min === 0) && chunks.some((c) => c.min === 100) && chunks.some((c) => c.min === 200), `split at the zone boundaries: ${JSON.stringify(chunks)}`);
    assert.equal(await coll.countDocuments(), 400);

    // zone_changes_range: the ranges swap zones; the chunks follow.
    await ctx.admin.command({ updateZoneKeyRange: 'zr.c', min: { x: 0 }, max: { x: 100 }, zone: null });
    await ctx.admin.command({ updateZoneKeyRange: 'zr.c', min: { x: 100 }, max: { x: 200 }, zone: null });
    await ctx.admin.command({ updateZoneKeyRange: 'zr.c', min: { x: 0 }, max: { x: 100 }, zone: 'B' });
    await ctx.admin.command({ updateZoneKeyRange: 'zr.c', min: { x: 100 }, max: { x: 200 }, zone: 'A' });
    await waitForPlacement('zr.c', (c) => {
      const s = zoneOf(c);
      return s === 'shard1' ? 'shard2' : s === 'shard2' ? 'shard1' : undefined;
    });
    assert.equal(await coll.countDocuments(), 400);
    assert.equal(new Set((await coll.find().toArray()).map((d) => String(d._id))).size, 400);
  });

  it('add_and_remove_shard_from_zone: chunks leave a shard that leaves their zone', { timeout: 180_000 }, async () => {
    // zone A ([100, 200) of zr.c) now lives on shard1; shard0 joins A, then shard1 leaves it.
    await ctx.admin.command({ addShardToZone: 'shard0', zone: 'A' });
    await ctx.admin.command({ removeShardFromZone: 'shard1', zone: 'A' });
    await waitForPlacement('zr.c', (c) => (typeof c.min.x === 'number' && c.min.x >= 100 && c.min.x < 200 ? 'shard0' : undefined));
    assert.equal(await ctx.client.db('zr').collection('c').countDocuments(), 400);
  });

  it('zone_changes_hashed: zones over hashed key ranges', { timeout: 180_000 }, async () => {
    await ctx.admin.command({ enableSharding: 'zh', primaryShard: 'shard0' });
    await ctx.admin.command({ shardCollection: 'zh.c', key: { x: 'hashed' }, numInitialChunks: 6 });
    const coll = ctx.client.db('zh').collection<AnyDoc>('c');
    await coll.insertMany(Array.from({ length: 300 }, (_, i) => ({ x: i })));
    await ctx.admin.command({ addShardToZone: 'shard2', zone: 'H1' });
    await ctx.admin.command({ addShardToZone: 'shard1', zone: 'H2' });
    await ctx.admin.command({ updateZoneKeyRange: 'zh.c', min: { x: new MinKey() }, max: { x: Long.fromNumber(0) }, zone: 'H1' });
    await ctx.admin.command({ updateZoneKeyRange: 'zh.c', min: { x: Long.fromNumber(0) }, max: { x: new MaxKey() }, zone: 'H2' });
    const side = (c: AnyDoc): string => {
      const min = c.min.x;
      if (min instanceof MinKey || min?._bsontype === 'MinKey') return 'shard2';
      return Number(min) < 0 ? 'shard2' : 'shard1';
    };
    await waitForPlacement('zh.c', side);
    assert.equal(await coll.countDocuments(), 300);
    // Swap the shards' zones: everything moves across.
    await ctx.admin.command({ addShardToZone: 'shard1', zone: 'H1' });
    await ctx.admin.command({ addShardToZone: 'shard2', zone: 'H2' });
    await ctx.admin.command({ removeShardFromZone: 'shard2', zone: 'H1' });
    await ctx.admin.command({ removeShardFromZone: 'shard1', zone: 'H2' });
    await waitForPlacement('zh.c', (c) => (side(c) === 'shard2' ? 'shard1' : 'shard2'));
    assert.equal(await coll.countDocuments(), 300);
    const status = await ctx.admin.command({ balancerCollectionStatus: 'zh.c' });
    assert.equal(status.balancerCompliant, true);
  });
});
