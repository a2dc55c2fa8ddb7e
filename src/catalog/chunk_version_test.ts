import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectId, Timestamp } from '../bson/values.js';
import { MongoError } from '../base/errors.js';
import {
  chunkVersion,
  formatChunkVersion,
  fromPlacementTimestamp,
  isUnsharded,
  placementTimestamp,
  sameGeneration,
  shardVersionFromBSON,
  shardVersionToBSON,
  unshardedVersion,
} from './chunk_version.js';

const epoch = new ObjectId('65a000000000000000000001');
const ts = new Timestamp({ t: 1700000000, i: 3 });

test('versions of another collection generation are told apart by epoch and timestamp', () => {
  const newer = chunkVersion(new ObjectId(), new Timestamp({ t: 1700000001, i: 0 }), 1, 0);
  assert.equal(sameGeneration(newer, chunkVersion(epoch, ts, 50, 7)), false);
  assert.equal(sameGeneration(chunkVersion(epoch, ts, 1, 0), chunkVersion(epoch, ts, 50, 7)), true);
});

test('the placement round-trips through the lastmod timestamp of config.chunks', () => {
  const v = chunkVersion(epoch, ts, 7, 42);
  const lastmod = placementTimestamp(v);
  assert.equal(lastmod.t, 7);
  assert.equal(lastmod.i, 42);
  assert.deepEqual(fromPlacementTimestamp(epoch, ts, lastmod), v);
});

test('placements from 2^31 up stay positive through the lastmod timestamp', () => {
  const v = chunkVersion(epoch, ts, 2 ** 31 + 1, 2 ** 32 - 1);
  const back = fromPlacementTimestamp(epoch, ts, placementTimestamp(v));
  assert.equal(back.major, 2 ** 31 + 1);
  assert.equal(back.minor, 2 ** 32 - 1);
});

test('the shardVersion field round-trips as {e, t, v}', () => {
  const v = chunkVersion(epoch, ts, 3, 1);
  const bson = shardVersionToBSON(v);
  assert.deepEqual(Object.keys(bson), ['e', 't', 'v']);
  assert.deepEqual(shardVersionFromBSON(bson), v);
});

test('a malformed shardVersion is a TypeMismatch', () => {
  for (const raw of [undefined, 5, { e: epoch, t: ts }, { e: 'x', t: ts, v: ts }, { e: epoch, t: 1, v: ts }]) {
    assert.throws(() => shardVersionFromBSON(raw), (err: unknown) => err instanceof MongoError && err.code === 14);
  }
});

test('UNSHARDED is epoch zero, placement 0|0, and recognised as such', () => {
  const v = unshardedVersion();
  assert.equal(v.epoch.toHexString(), '000000000000000000000000');
  assert.equal(isUnsharded(v), true);
  assert.equal(isUnsharded(chunkVersion(epoch, ts, 0, 0)), false);
  assert.equal(isUnsharded(chunkVersion(v.epoch, v.timestamp, 1, 0)), false);
});

test('a version prints as major|minor||epoch||timestamp', () => {
  assert.equal(formatChunkVersion(chunkVersion(epoch, ts, 2, 5)), '2|5||65a000000000000000000001||1700000000:3');
});
