import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const N = 200;
const WAIT_MS = 30_000;

describe('serverStatus, currentOp and cleanupOrphaned show a migration', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  const direct: MongoClient[] = [];

  withCluster({ shards: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client } = f);
    for (const s of cluster.shards) direct.push(f.connect(`mongodb://127.0.0.1:${s.port}/?directConnection=true`));
    await client.db('admin').command({ enableSharding: 'mo', primaryShard: 'shard0' });
    await client.db('admin').command({ shardCollection: 'mo.c', key: { k: 1 } });
    await client.db('admin').command({ split: 'mo.c', middle: { k: N / 2 } });
    await client.db('mo').collection<AnyDoc>('c').insertMany(Array.from({ length: N }, (_, i) => ({ _id: i, k: i, pad: `v${i}` })));
  });

  it('reports the migration in flight on both shards, then the counters', async () => {
    const [donor, recipient] = direct.map((d) => d.db('admin'));
    const before0 = (await donor!.command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
    const before1 = (await recipient!.command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
    assert.equal(before0.docshard.migration, null);
    assert.equal(before1.docshard.migration, null);

    const { count } = await donor!.command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'alwaysOn' });
    const moving = client.db('admin').command({ moveChunk: 'mo.c', find: { k: 1 }, to: 'shard1', _waitForDelete: true });
    moving.catch(() => {});
    try {
      await donor!.command({ waitForFailPoint: 'moveChunkHangAtStep3', timesEntered: count + 1, maxTimeMS: WAIT_MS });

      const donorStatus = (await donor!.command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
      assert.equal(donorStatus.countDonorMoveChunkStarted, before0.countDonorMoveChunkStarted + 1);
      assert.equal(donorStatus.docshard.migration.role, 'donor');
      assert.equal(donorStatus.docshard.migration.phase, 'kCloneCaughtUp');
      assert.equal(donorStatus.docshard.migration.clonedDocs, N / 2);
      assert.ok(donorStatus.docshard.migration.clonedBytes > 0);
      assert.ok(donorStatus.docshard.rangeDeletions.pending >= 1);

      const recipientStatus = (await recipient!.command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
      assert.equal(recipientStatus.countRecipientMoveChunkStarted, before1.countRecipientMoveChunkStarted + 1);
      assert.equal(recipientStatus.countDocsClonedOnRecipient, before1.countDocsClonedOnRecipient + N / 2);
      assert.ok(recipientStatus.countBytesClonedOnRecipient > before1.countBytesClonedOnRecipient);
      assert.equal(recipientStatus.docshard.migration.role, 'recipient');
      assert.equal(recipientStatus.docshard.migration.state, 'steady');
      assert.ok(recipientStatus.docshard.migration.transferModsBatches >= 1);

      const donorOps = (await donor!.command({ currentOp: 1 })).inprog as AnyDoc[];
      const move = donorOps.find((op) => op.desc === 'MoveChunk');
      assert.ok(move !== undefined, JSON.stringify(donorOps));
      assert.equal(move.op, 'command');
      assert.equal(move.command._shardsvrMoveRange, 'mo.c');
      assert.equal(move.command.toShard, 'shard1');
      assert.equal(move.clonedDocs, N / 2);

      const recipientOps = (await recipient!.command({ currentOp: 1, desc: 'migrateThread' })).inprog as AnyDoc[];
      assert.equal(recipientOps.length, 1);
      assert.equal(recipientOps[0]!.command._recvChunkStart, 'mo.c');
      assert.equal(recipientOps[0]!.command.fromShardName, 'shard0');
      assert.equal(recipientOps[0]!.clonedDocs, N / 2);

      // The same through $currentOp, the way mongosh's db.currentOp() asks: on a shard, and through
      // the router, which lists every shard's operations under its shard name.
      const stage = { $currentOp: { allUsers: true, idleConnections: false, truncateOps: false } };
      const onDonor = await donor!.aggregate([stage, { $match: { desc: 'MoveChunk' } }]).toArray();
      assert.deepEqual(onDonor.map((op) => [op.opid, op.command._shardsvrMoveRange]), [[move.opid, 'mo.c']]);
      const viaRouter = await client.db('admin').aggregate([stage, { $match: { desc: { $in: ['MoveChunk', 'migrateThread'] } } }, { $sort: { desc: 1 } }]).toArray();
      assert.deepEqual(viaRouter.map((op) => [op.desc, op.shard, op.opid]), [['MoveChunk', 'shard0', `shard0:${move.opid}`], ['migrateThread', 'shard1', `shard1:${recipientOps[0]!.opid}`]]);
      const wrongDb = await client.db('mo').aggregate([stage]).toArray().catch((e) => e);
      assert.equal(wrongDb.code, 73);
      // The currentOp command through the router, its filter in the query language.
      const listed = await client.db('admin').command({ currentOp: 1, desc: { $regex: '^Move' } });
      assert.deepEqual(listed.inprog.map((op: AnyDoc) => [op.shard, op.opid]), [['shard0', `shard0:${move.opid}`]]);
    } finally {
      await donor!.command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'off' });
    }
    assert.equal((await moving).ok, 1);

    const after0 = (await donor!.command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
    assert.equal(after0.docshard.migration, null);
    assert.equal(after0.countDonorMoveChunkCommitted, before0.countDonorMoveChunkCommitted + 1);
    assert.ok(after0.totalDonorMoveChunkTimeMillis >= before0.totalDonorMoveChunkTimeMillis);
    const after1 = (await recipient!.command({ serverStatus: 1 })).shardingStatistics as AnyDoc;
    assert.equal(after1.docshard.migration, null);
    assert.equal(after1.countDocsClonedOnRecipient, before1.countDocsClonedOnRecipient + N / 2);
    assert.equal((await recipient!.command({ currentOp: 1, desc: 'migrateThread' })).inprog.length, 0);

    for (const admin of [donor!, recipient!]) assert.equal((await admin.command({ cleanupOrphaned: 'mo.c' })).ok, 1);
    assert.equal((await donor!.command({ serverStatus: 1 })).shardingStatistics.rangeDeleterTasks, 0);
    assert.equal(await direct[0]!.db('mo').collection('c').countDocuments({ k: { $lt: N / 2 } }), 0);
  });

  it('cleanupOrphaned checks its namespace', async () => {
    await assert.rejects(direct[0]!.db('admin').command({ cleanupOrphaned: 'nodot' }), (e: AnyDoc) => e.code === 73);
    await assert.rejects(direct[0]!.db('admin').command({ cleanupOrphaned: 'mo.c', startingFromKey: 5 }), (e: AnyDoc) => e.code === 14);
    assert.equal((await direct[0]!.db('admin').command({ cleanupOrphaned: 'mo.none', startingFromKey: { k: 0 } })).ok, 1);
  });
});
