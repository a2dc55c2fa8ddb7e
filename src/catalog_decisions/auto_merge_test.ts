import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import type { ChunkType } from '../catalog/type_chunk.js';
import { mergeableRuns } from './auto_merge.js';

const OLD = 100; // seconds
const NOW_MS = 1_000_000;

function chunk(min: unknown, max: unknown, shard: string, placedAt = OLD, jumbo = false): ChunkType {
  const since = new Timestamp({ t: placedAt, i: 1 });
  return { _id: new ObjectId(), uuid: new UUID(), min: { k: min }, max: { k: max }, shard, lastmod: since, onCurrentShardSince: since, history: [{ validAfter: since, shard }], ...(jumbo ? { jumbo } : {}) } as unknown as ChunkType;
}

const bounds = (runs: ChunkType[][]): unknown[][] => runs.map((r) => [r[0]!.min.k, r[r.length - 1]!.max.k]);

test('contiguous settled chunks on one shard form a run; another shard breaks it', () => {
  const chunks = [chunk(new MinKey(), 10, 'a'), chunk(10, 20, 'a'), chunk(20, 30, 'b'), chunk(30, 40, 'a'), chunk(40, new MaxKey(), 'a')];
  assert.deepEqual(bounds(mergeableRuns(chunks, [], NOW_MS)).map(([, max]) => max), [20, chunks[4]!.max.k]);
});

test('a zone boundary, a jumbo chunk or a recent move breaks a run', () => {
  const zone = [{ min: { k: 20 }, max: { k: 40 }, zone: 'Z' }];
  const chunks = [chunk(0, 10, 'a'), chunk(10, 20, 'a'), chunk(20, 30, 'a'), chunk(30, 40, 'a'), chunk(40, 50, 'a', OLD, true), chunk(50, 60, 'a'), chunk(60, 70, 'a', NOW_MS / 1000)];
  assert.deepEqual(bounds(mergeableRuns(chunks, zone, NOW_MS)), [[0, 20], [20, 40]]);
});
