import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// Issue 19: maxTimeMS is enforced (MaxTimeMSExpired, 50) on nodes and routers: on a slow
// aggregate, on every command that takes it (with MongoDB's maxTimeAlwaysTimeOut fail point), and
// while a write waits for a migration's critical section; bad values are refused as mongod does.
const OUTER = 2000;
const INNER = 5000;

// An aggregate that reads INNER documents for each of OUTER ones: seconds of work.
const SLOW = [{ $lookup: { from: 'inner', pipeline: [{ $match: { never: true } }], as: 'none' } }];

async function fill(db: Db): Promise<void> {
  await db.collection<AnyDoc>('outer').insertMany(Array.from({ length: OUTER }, (_, i) => ({ _id: i })));
  await db.collection<AnyDoc>('inner').insertMany(Array.from({ length: INNER }, (_, i) => ({ _id: i, k: i })));
}

describe('maxTimeMS', () => {
  let node: SpawnedNode;
  let cluster: SpawnedCluster;
  let direct: MongoClient;
  let routed: MongoClient;

  withProcesses(async (p) => {
    [node, cluster] = await Promise.all([
      p.node({ extraArgs: ['--enableTestCommands'] }),
      p.cluster({ shards: 2, enableTestCommands: true }),
    ]);
    direct = p.connect(node.uri);
    routed = p.connect(cluster.routers[0]!.uri);
    await routed.db('admin').command({ enableSharding: 'mt', primaryShard: 'shard0' });
    await Promise.all([fill(direct.db('mt')), fill(routed.db('mt'))]);
  });

  for (const where of ['node', 'router'] as const) {
    it(`a slow aggregate with maxTimeMS: 50 answers MaxTimeMSExpired on a ${where}, and runs to the end without it`, { timeout: 60_000 }, async () => {
      const db = (where === 'node' ? direct : routed).db('mt');
      const started = Date.now();
      await assert.rejects(db.collection('outer').aggregate(SLOW, { maxTimeMS: 50 }).toArray(), { code: 50, codeName: 'MaxTimeMSExpired' });
      assert.ok(Date.now() - started < 5000, `stopped in time: ${Date.now() - started} ms`);
      const slow = Date.now();
      assert.equal((await db.collection('outer').aggregate(SLOW).toArray()).length, OUTER);
      assert.ok(Date.now() - slow > 100, 'the aggregate is slow enough to time out at 50 ms');
    });

    it(`bad maxTimeMS values are refused on a ${where}`, async () => {
      const db = (where === 'node' ? direct : routed).db('mt');
      await assert.rejects(db.command({ find: 'outer', maxTimeMS: -1 }), { code: 2, message: 'maxTimeMS is out of range' });
      await assert.rejects(db.command({ find: 'outer', maxTimeMS: 'soon' }), { code: 2, message: 'maxTimeMS must be a number' });
      await assert.rejects(db.command({ find: 'outer', maxTimeMS: 1.5 }), { code: 2, message: 'maxTimeMS has non-integral value' });
      await assert.rejects(db.command({ count: 'outer', maxTimeMS: 2 ** 31 }), { code: 2, message: 'maxTimeMS is out of range' });
    });
  }

  it('every command that takes maxTimeMS honours it (maxTimeAlwaysTimeOut), and nothing is written', async () => {
    const db = direct.db('mt');
    await direct.db('admin').command({ configureFailPoint: 'maxTimeAlwaysTimeOut', mode: 'alwaysOn' });
    try {
      const commands: AnyDoc[] = [
        { find: 'outer', maxTimeMS: 1000 },
        { aggregate: 'outer', pipeline: [], cursor: {}, maxTimeMS: 1000 },
        { count: 'outer', maxTimeMS: 1000 },
        { distinct: 'outer', key: '_id', maxTimeMS: 1000 },
        { findAndModify: 'outer', query: { _id: 1 }, update: { $set: { x: 1 } }, maxTimeMS: 1000 },
        { insert: 'outer', documents: [{ _id: 'new' }], maxTimeMS: 1000 },
        { update: 'outer', updates: [{ q: { _id: 2 }, u: { $set: { x: 1 } } }], maxTimeMS: 1000 },
        { delete: 'outer', deletes: [{ q: { _id: 3 }, limit: 1 }], maxTimeMS: 1000 },
      ];
      for (const cmd of commands) await assert.rejects(db.command(cmd), { code: 50 }, Object.keys(cmd)[0]);
      assert.equal((await db.command({ count: 'outer' })).n, OUTER, 'a command without maxTimeMS is not affected');
    } finally {
      await direct.db('admin').command({ configureFailPoint: 'maxTimeAlwaysTimeOut', mode: 'off' });
    }
    assert.equal(await db.collection('outer').countDocuments({ x: 1 }), 0);
    assert.equal(await db.collection<AnyDoc>('outer').countDocuments({ _id: 'new' }), 0);
    assert.equal(await db.collection<AnyDoc>('outer').countDocuments({ _id: 3 }), 1);
  });

  it('a write waiting for a migration\'s critical section times out through the router', { timeout: 60_000 }, async () => {
    const admin = routed.db('admin');
    await admin.command({ shardCollection: 'mt.moving', key: { k: 1 } });
    const coll = routed.db('mt').collection<AnyDoc>('moving');
    await coll.insertMany(Array.from({ length: 100 }, (_, k) => ({ k })));
    const donor = new MongoClient(cluster.shards[0]!.uri);
    try {
      await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep4', mode: 'alwaysOn' });
      const move = admin.command({ moveChunk: 'mt.moving', find: { k: 1 }, to: 'shard1' });
      await donor.db('admin').command({ waitForFailPoint: 'moveChunkHangAtStep4', timesEntered: 1, maxTimeMS: 30_000 });
      const started = Date.now();
      await assert.rejects(coll.insertOne({ k: 5 }, { maxTimeMS: 300 } as never), { code: 50 });
      assert.ok(Date.now() - started >= 250, `waited for its time: ${Date.now() - started} ms`);
      await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep4', mode: 'off' });
      await move;
    } finally {
      await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep4', mode: 'off' });
      await donor.close();
    }
  });
});
