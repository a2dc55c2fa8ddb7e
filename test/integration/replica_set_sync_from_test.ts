import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoServerError, type MongoClient } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// replSetSyncFrom (rs.syncFrom) on a real three-member set: a secondary asked to sync from the
// other secondary leaves the primary for it, and a w: 3 write still reaches it (through the
// chain); the primary, the member itself and an unknown host are refused with MongoDB's codes.
describe('replSetSyncFrom', () => {
  let set: SpawnedReplicaSet;
  let connect: (uri: string) => MongoClient;
  withProcesses(async (p) => {
    set = await p.replicaSet();
    connect = (uri) => p.connect(uri, { serverSelectionTimeoutMS: 30_000 });
  });

  it('moves a secondary to the sync source asked for, and refuses what MongoDB refuses', { timeout: 120_000 }, async () => {
    const primary = (await connect(set.uri).db('admin').command({ hello: 1 })).primary as string;
    const [a, b] = set.hosts.filter((h) => h !== primary) as [string, string];
    const adminOf = (host: string): ReturnType<MongoClient['db']> => connect(`mongodb://${host}/?directConnection=true`).db('admin');
    const statusOf = async (host: string): Promise<string> => (await adminOf(host).command({ replSetGetStatus: 1 })).syncSourceHost as string;
    await until('a syncing from the primary', async () => (await statusOf(a)) === primary ? true : undefined);

    const reply = await adminOf(a).command({ replSetSyncFrom: b });
    assert.equal(reply.syncFromRequested, b);
    assert.equal(reply.prevSyncTarget, primary);
    await until('a syncing from b', async () => (await statusOf(a)) === b ? true : undefined, 30_000);
    await connect(set.uri).db('app').collection<{ _id: number }>('c').insertOne({ _id: 1 }, { writeConcern: { w: 3, wtimeout: 20_000 } });
    const onA = await connect(`mongodb://${a}/?directConnection=true&readPreference=secondary`).db('app').collection<{ _id: number }>('c').findOne({ _id: 1 });
    assert.deepEqual(onA, { _id: 1 });
    assert.equal(await statusOf(a), b, 'it stays with the source it was given');

    const refused = async (host: string, target: string, code: number): Promise<void> => {
      await assert.rejects(adminOf(host).command({ replSetSyncFrom: target }), (err: unknown) => err instanceof MongoServerError && err.code === code);
    };
    await refused(primary, a, 95);
    await refused(a, a, 72);
    await refused(a, '127.0.0.1:1', 74);
  });
});
