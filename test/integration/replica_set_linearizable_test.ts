import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoServerError, type MongoClient } from 'mongodb';
import { withProcesses } from '../helpers/fixtures.js';
import type { SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// readConcern linearizable on a real three-member set: answered by the primary once a majority
// confirmed it is still primary; refused on a secondary (NotWritablePrimary); a primary whose two
// secondaries are stopped (SIGSTOP) answers a linearizable read with MaxTimeMSExpired at the
// read's maxTimeMS, within the election timeout, while it still answers a local read. A majority
// or snapshot read that waits for a write only the primary holds ends at its maxTimeMS too
// (MaxTimeMSExpired, as MongoDB's read concern wait honours the operation's deadline).
describe('readConcern linearizable', () => {
  let set: SpawnedReplicaSet;
  let connect: (uri: string) => MongoClient;
  withProcesses(async (p) => {
    set = await p.replicaSet();
    connect = (uri) => p.connect(uri, { serverSelectionTimeoutMS: 30_000 });
    p.beforeStop(() => { for (const n of set.nodes) n.child.kill('SIGCONT'); });
  });

  it('is served by a primary a majority still follows, refused on a secondary, and never answered by a primary cut off from its majority', { timeout: 120_000 }, async () => {
    const coll = connect(set.uri).db('app').collection<{ _id: number; v: string }>('c');
    await coll.insertOne({ _id: 1, v: 'x' }, { writeConcern: { w: 'majority' } });
    const primary = (await connect(set.uri).db('admin').command({ hello: 1 })).primary as string;
    const onPrimary = connect(`mongodb://${primary}/?directConnection=true`).db('app');
    const read = (db: ReturnType<MongoClient['db']>, maxTimeMS?: number) => db.command({ find: 'c', filter: { _id: 1 }, readConcern: { level: 'linearizable' }, ...(maxTimeMS === undefined ? {} : { maxTimeMS }) });
    assert.deepEqual((await read(onPrimary)).cursor.firstBatch, [{ _id: 1, v: 'x' }]);

    const secondaries = set.hosts.filter((h) => h !== primary);
    const onSecondary = connect(`mongodb://${secondaries[0]}/?directConnection=true&readPreference=secondary`).db('app');
    await assert.rejects(read(onSecondary), (err: unknown) => err instanceof MongoServerError && err.code === 10107);

    for (const h of secondaries) set.nodes[set.hosts.indexOf(h)]!.child.kill('SIGSTOP');
    const started = Date.now();
    await assert.rejects(read(onPrimary, 2000), (err: unknown) => err instanceof MongoServerError && err.code === 50);
    assert.ok(Date.now() - started >= 1900, 'not before its maxTimeMS');
    const local = await onPrimary.command({ find: 'c', filter: { _id: 1 } });
    assert.deepEqual(local.cursor.firstBatch, [{ _id: 1, v: 'x' }], 'a local read is still answered');

    const written = await onPrimary.command({ insert: 'c', documents: [{ _id: 2, v: 'y' }], writeConcern: { w: 1 } });
    const at = written.operationTime;
    for (const readConcern of [{ level: 'majority', afterClusterTime: at }, { level: 'snapshot', atClusterTime: at }]) {
      const waitStarted = Date.now();
      await assert.rejects(onPrimary.command({ find: 'c', filter: { _id: 2 }, readConcern, maxTimeMS: 1000 }), (err: unknown) => err instanceof MongoServerError && err.code === 50, readConcern.level);
      assert.ok(Date.now() - waitStarted >= 900, `${readConcern.level}: not before its maxTimeMS`);
    }
  });
});
