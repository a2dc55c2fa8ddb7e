import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MongoClient } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

// Issue 32: config.shards.host of a shard that is a replica set follows the set's membership, as
// MongoDB's ShardingReplicaSetChangeListener keeps it: a reconfig that adds a member lists it, one
// that removes it drops it, and a router started afterwards reaches the set from the catalog.
describe('config.shards.host follows the membership of a shard set', () => {
  let p: SuiteProcesses;
  let set: SpawnedReplicaSet;
  let configPort: number;
  let router: MongoClient;

  withProcesses(async (processes) => {
    p = processes;
    configPort = (await p.node({ role: 'config' })).port;
    set = await p.replicaSet({ name: 'rs0', members: 3, electionTimeoutMillis: 5000 });
    router = p.connect((await p.router(configPort)).uri);
    await router.db('admin').command({ addShard: `rs0/${set.hosts[0]}` });
    await router.db('app').collection<AnyDoc>('c').insertOne({ _id: 1 });
  });

  const storedHost = async (): Promise<unknown> => (await router.db('config').collection<AnyDoc>('shards').findOne({ _id: 'rs0' }))?.host;
  const becomes = (expected: string): Promise<true> => until(`config.shards.host ${expected}`, async () => ((await storedHost()) === expected ? true : undefined), 30_000, 250);

  async function reconfig(change: (members: AnyDoc[]) => AnyDoc[]): Promise<void> {
    const admin = p.connect(set.uri).db('admin');
    const { config } = await admin.command({ replSetGetConfig: 1 });
    await admin.command({ replSetReconfig: { ...config, version: Number(config.version) + 1, members: change(config.members as AnyDoc[]) } });
  }

  it('lists a member a reconfig adds, drops it once removed, and a router started afterwards finds the set', { timeout: 180_000 }, async () => {
    assert.equal(await storedHost(), `rs0/${set.hosts.join(',')}`);
    const fourth = await p.node({ extraArgs: ['--replSet', 'rs0'] });
    const added = `127.0.0.1:${fourth.port}`;
    // A passive member (priority 0, no vote): the set keeps its primary and majority throughout.
    await reconfig((members) => [...members, { _id: 3, host: added, priority: 0, votes: 0 }]);
    await becomes(`rs0/${[...set.hosts, added].join(',')}`);

    await reconfig((members) => members.filter((m) => m.host !== added));
    await becomes(`rs0/${set.hosts.join(',')}`);

    const later = p.connect((await p.router(configPort)).uri);
    const coll = later.db('app').collection<AnyDoc>('c');
    await coll.insertOne({ _id: 2 });
    assert.deepEqual(await coll.find().sort({ _id: 1 }).toArray(), [{ _id: 1 }, { _id: 2 }]);
  });
});
