import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

// A routed request whose version check waits for a refresh of the shard's metadata is admitted
// again once the refresh answers: a critical section entered meanwhile holds it as it holds a
// request that arrives after it.
const REFRESH_FAIL_POINT = 'hangBeforeFilteringMetadataRefresh';

describe('a routed write that waited for a refresh is admitted again', () => {
  let cluster: SpawnedCluster;
  let router: MongoClient;
  let shard: MongoClient;

  withCluster({ shards: 1, enableTestCommands: true }, async (f) => {
    ({ cluster, client: router } = f);
    shard = f.connect(cluster.shards[0]!.uri);
    f.processes.beforeStop(() => shard.db('admin').command({ configureFailPoint: REFRESH_FAIL_POINT, mode: 'off' }).catch(() => undefined));
    await router.db('admin').command({ enableSharding: 'adm', primaryShard: 'shard0' });
    await router.db('admin').command({ shardCollection: 'adm.c', key: { k: 1 } });
    await router.db('adm').collection<AnyDoc>('c').insertOne({ _id: 0, k: 0 });
  });

  it('waits for a critical section entered while its refresh was running', async () => {
    const admin = shard.db('admin');
    const reason = { command: 'test', ns: 'adm.c' };
    const { count } = await admin.command({ configureFailPoint: REFRESH_FAIL_POINT, mode: 'alwaysOn' });
    // Unblocking a section nobody holds only makes the shard forget the collection's metadata.
    await shard.db('adm').command({ _shardsvrParticipantBlock: 'c', blockType: 'Unblock', reason: { command: 'forget', ns: 'adm.c' } });
    const write = router.db('adm').collection<AnyDoc>('c').insertOne({ _id: 1, k: 1 });
    await admin.command({ waitForFailPoint: REFRESH_FAIL_POINT, timesEntered: count + 1, maxTimeMS: 20_000 });
    await shard.db('adm').command({ _shardsvrParticipantBlock: 'c', blockType: 'Writes', reason });
    await admin.command({ configureFailPoint: REFRESH_FAIL_POINT, mode: 'off' });
    const early = await Promise.race([write.then(() => 'written'), sleep(700).then(() => 'held')]);
    assert.equal(early, 'held', 'the write waits for the critical section');
    assert.equal(await shard.db('adm').collection<AnyDoc>('c').countDocuments({ _id: 1 }), 0, 'nothing was written under the critical section');
    await shard.db('adm').command({ _shardsvrParticipantBlock: 'c', blockType: 'Unblock', reason });
    await write;
    assert.equal(await shard.db('adm').collection<AnyDoc>('c').countDocuments({ _id: 1 }), 1);
  });
});
