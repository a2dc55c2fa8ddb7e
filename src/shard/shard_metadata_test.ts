import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MaxKey, MinKey, ObjectId, Timestamp, UUID } from 'bson';
import { shardVersionToBSON, unshardedVersion } from '../catalog/chunk_version.js';
import type { ChunkType, CollectionType, DatabaseType } from '../catalog/type_chunk.js';
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

test('placement tells what is loaded without asking the config server', async () => {
  const epoch = new ObjectId();
  const ts = new Timestamp({ t: 5, i: 1 });
  const chunk = (min: unknown, max: unknown, shard: string) => ({ _id: new ObjectId(), uuid: new UUID(), min: { k: min }, max: { k: max }, shard, lastmod: new Timestamp({ t: 1, i: 0 }), history: [] });
  let reads = 0;
  const reader: ConfigReader = {
    readCollection: (ns) => {
      reads += 1;
      if (ns !== 'db.sharded') return Promise.resolve(undefined);
      const collection = { _id: ns, lastmodEpoch: epoch, timestamp: ts, uuid: new UUID(), key: { k: 1 }, unique: false } as unknown as CollectionType;
      return Promise.resolve({ collection, chunks: [chunk(new MinKey(), 10, 'shard0'), chunk(10, new MaxKey(), 'shard1')] as unknown as ChunkType[] });
    },
    readDatabase: () => Promise.resolve(undefined),
  };
  const metadata = new ShardMetadata(() => 'shard0', () => reader);
  assert.deepEqual(metadata.placement('db.plain'), { kind: 'unknown' });
  assert.equal(reads, 0);
  await metadata.refreshCollection('db.plain');
  await metadata.refreshCollection('db.sharded');
  assert.deepEqual(metadata.placement('db.plain'), { kind: 'unsharded' });
  const sharded = metadata.placement('db.sharded');
  assert.ok(sharded.kind === 'sharded' && sharded.ownership.ownsDocument({ k: 9 }) && !sharded.ownership.ownsDocument({ k: 10 }));
  metadata.holdUntilRecovered('db.sharded', new Promise(() => undefined));
  assert.deepEqual(metadata.placement('db.sharded'), { kind: 'recovering' });
});

test('a refresh that read the config server before the shard forgot a database does not bring its old version back', async () => {
  const version = { uuid: new UUID(), timestamp: new Timestamp({ t: 7, i: 1 }), lastMod: 1 };
  let answer!: () => void;
  const reader: ConfigReader = {
    readCollection: () => Promise.resolve(undefined),
    // Answers as of before the database was dropped, once the test lets it.
    readDatabase: (db) => new Promise((r) => { answer = () => r({ _id: db, primary: 'shard0', version } as unknown as DatabaseType); }),
  };
  const metadata = new ShardMetadata(() => 'shard0', () => reader);
  const request = metadata.checkRequest('db', undefined, { databaseVersion: version }).then(() => 'ran', (err: { code?: number }) => err.code);
  await new Promise((r) => setImmediate(r));
  metadata.forgetDatabase('db'); // the dropDatabase coordinator, after its commit
  answer();
  assert.equal(await request, 249, 'StaleDbVersion: the request does not run on the old primary');
  assert.equal(metadata.admit('db', undefined, { databaseVersion: version }) === undefined, false, 'nothing was cached from the late answer');
});
