import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shardVersionToBSON, unshardedVersion } from '../catalog/chunk_version.js';
import { ShardMetadata, type ConfigReader } from './shard_metadata.js';

test('versioned requests for a namespace wait until its migration recovery settles', async () => {
  let reads = 0;
  const reader: ConfigReader = {
    readCollection: () => { reads += 1; return Promise.resolve(undefined); },
    readDatabase: () => Promise.resolve(undefined),
  };
  const metadata = new ShardMetadata(() => 'shard0', () => reader);
  let recovered!: () => void;
  metadata.holdUntilRecovered('db.c', new Promise<void>((r) => { recovered = r; }));

  let answered = false;
  const request = metadata.checkRequest('db', 'db.c', { shardVersion: shardVersionToBSON(unshardedVersion()) }).then(() => { answered = true; });
  await metadata.checkRequest('db', 'db.other', { shardVersion: shardVersionToBSON(unshardedVersion()) });
  assert.equal(reads, 1, 'another namespace is not held');
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual([answered, reads], [false, 1], 'no refresh before the recovery decided');

  recovered();
  await request;
  assert.equal(reads, 2);
});
