import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UUID, type MongoClient } from 'mongodb';
import { withProcesses, type SuiteProcesses } from '../helpers/fixtures.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { until, type SpawnedReplicaSet } from '../helpers/spawn_replset.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// One direct client per member (closed with its suite).
const directClients = new Map<string, MongoClient>();
function direct(p: SuiteProcesses, host: string): MongoClient {
  let client = directClients.get(host);
  if (client === undefined) {
    client = p.connect(`mongodb://${host}/?directConnection=true&readPreference=secondaryPreferred`);
    directClients.set(host, client);
  }
  return client;
}

// The member that says it is the writable primary (other than `notHost`).
async function primaryOf(p: SuiteProcesses, set: SpawnedReplicaSet, notHost?: string): Promise<string> {
  return until('a primary', async () => {
    for (const host of set.hosts) {
      if (host === notHost) continue;
      const hello = await direct(p, host).db('admin').command({ hello: 1 });
      if (hello.isWritablePrimary === true && hello.me === host) return host;
    }
    return undefined;
  }, 60_000, 100);
}

// replSetStepDown answers before or as the primary steps down; either way it is no longer primary.
async function stepDown(client: MongoClient): Promise<void> {
  await client.db('admin').command({ replSetStepDown: 60, secondaryCatchUpPeriodSecs: 10 }).catch(() => undefined);
}

const logged = (node: SpawnedNode, msg: string): boolean => node.logs.some((line) => line.includes(`"msg":"${msg}"`));

// Issue 32, primary-only services: on a shard that is a 3-member set only the primary runs range
// deletions. The task document is written directly as a fixture (the shape a donor's migration
// writes, range_deletion_task.ts): what is under test is who runs a task that replicated, not how a
// migration makes one. It is 'delayed' by orphanCleanupDelaySecs so that the primary that wrote it
// steps down before running it.
describe('range deletions on a shard that is a replica set run on its primary only', () => {
  let set: SpawnedReplicaSet;
  let p: SuiteProcesses;
  withProcesses(async (processes) => {
    p = processes;
    set = await p.replicaSet({ members: 3, electionTimeoutMillis: 2000, node: () => ({ extraArgs: ['--setParameter', 'orphanCleanupDelaySecs=4'] }) });
  });

  it('a task the old primary wrote is run to completion by the new primary after a step-down, and by no other member', { timeout: 180_000 }, async () => {
    const client = p.connect(set.uri, { serverSelectionTimeoutMS: 30_000, heartbeatFrequencyMS: 500 });
    const coll = client.db('test').collection<AnyDoc>('c');
    await coll.createIndex({ x: 1 });
    await coll.insertMany(Array.from({ length: 100 }, (_, x) => ({ x })), { writeConcern: { w: 'majority' } });
    const info = (await client.db('test').listCollections({ name: 'c' }).next()) as AnyDoc;
    const oldPrimaryHost = await primaryOf(p, set);
    await client.db('config').collection<AnyDoc>('rangeDeletions').insertOne({
      _id: new UUID(), nss: 'test.c', collectionUuid: info.info.uuid, donorShardId: 'shardA',
      range: { min: { x: 0 }, max: { x: 50 } }, whenToClean: 'delayed', numOrphanDocs: 50, orphanedSizeBytes: 0, keyPattern: { x: 1 },
    }, { writeConcern: { w: 3 } });
    await stepDown(direct(p, oldPrimaryHost));
    const newPrimaryHost = await primaryOf(p, set, oldPrimaryHost);

    const newPrimary = direct(p, newPrimaryHost);
    await until('the range deleted and the task gone on the new primary', async () => {
      const left = await newPrimary.db('test').collection('c').countDocuments({ x: { $lt: 50 } });
      const tasks = await newPrimary.db('config').collection('rangeDeletions').countDocuments({});
      return left === 0 && tasks === 0 ? true : undefined;
    }, 60_000);
    // Every member holds the outcome; the others had the task's delay and more to run it.
    await sleep(5000);
    for (const host of set.hosts) {
      const member = direct(p, host);
      await until(`${host} caught up`, async () => ((await member.db('config').collection('rangeDeletions').countDocuments({})) === 0 ? true : undefined));
      assert.equal(await member.db('test').collection('c').countDocuments({}), 50, host);
    }
    for (const [i, node] of set.nodes.entries()) {
      const host = set.hosts[i]!;
      assert.equal(logged(node, 'Finished deleting documents in range'), host === newPrimaryHost, `${host} (new primary ${newPrimaryHost}) ran the task`);
      assert.equal(logged(node, 'Range deletion failed'), false, `${host} tried to run the task`);
    }
  });

  it('a task written before the primary is killed is run by the new primary, and not by the surviving secondary', { timeout: 180_000 }, async () => {
    const client = p.connect(set.uri, { serverSelectionTimeoutMS: 30_000, heartbeatFrequencyMS: 500 });
    const coll = client.db('test').collection<AnyDoc>('k');
    await coll.createIndex({ x: 1 });
    await coll.insertMany(Array.from({ length: 100 }, (_, x) => ({ x })), { writeConcern: { w: 'majority' } });
    const info = (await client.db('test').listCollections({ name: 'k' }).next()) as AnyDoc;
    const killedHost = await primaryOf(p, set);
    const finishedBefore = set.nodes.map((n) => n.logs.filter((l) => l.includes('"msg":"Finished deleting documents in range"')).length);
    await client.db('config').collection<AnyDoc>('rangeDeletions').insertOne({
      _id: new UUID(), nss: 'test.k', collectionUuid: info.info.uuid, donorShardId: 'shardA',
      range: { min: { x: 50 }, max: { x: 100 } }, whenToClean: 'delayed', numOrphanDocs: 50, orphanedSizeBytes: 0, keyPattern: { x: 1 },
    }, { writeConcern: { w: 3 } });
    await set.nodes[set.hosts.indexOf(killedHost)]!.kill9();
    const newPrimaryHost = await primaryOf(p, set, killedHost);
    const survivors = set.hosts.filter((h) => h !== killedHost);
    await until('the range deleted and the task gone on both survivors', async () => {
      for (const host of survivors) {
        const left = await direct(p, host).db('test').collection('k').countDocuments({ x: { $gte: 50 } });
        const tasks = await direct(p, host).db('config').collection('rangeDeletions').countDocuments({});
        if (left !== 0 || tasks !== 0) return undefined;
      }
      return true;
    }, 60_000);
    await sleep(5000);
    for (const host of survivors) {
      const node = set.nodes[set.hosts.indexOf(host)]!;
      const finished = node.logs.filter((l) => l.includes('"msg":"Finished deleting documents in range"')).length - finishedBefore[set.hosts.indexOf(host)]!;
      assert.equal(finished, host === newPrimaryHost ? 1 : 0, `${host} (new primary ${newPrimaryHost}) ran the task`);
      assert.equal(logged(node, 'Range deletion failed'), false, `${host} tried to run the task`);
    }
  });
});

// Issue 32: a config server that is a 3-member set runs its balancer on its primary only, and a
// step-down moves it to the new primary. balancerStatus answers on every member with its own
// balancer's rounds.
describe('the balancer of a config server that is a replica set', () => {
  let set: SpawnedReplicaSet;
  let p: SuiteProcesses;
  withProcesses(async (processes) => {
    p = processes;
    set = await p.replicaSet({
      name: 'cfg', members: 3, electionTimeoutMillis: 2000,
      node: () => ({ role: 'config', extraArgs: ['--setParameter', 'balancerIdleRoundIntervalMillis=100'] }),
    });
  });

  const rounds = async (host: string): Promise<number> => {
    const status = await direct(p, host).db('admin').command({ balancerStatus: 1 });
    return Number(status.numBalancerRounds);
  };
  // Rounds each member ran over a second and a half.
  const roundsMeanwhile = async (): Promise<Map<string, number>> => {
    const before = await Promise.all(set.hosts.map(rounds));
    await sleep(1500);
    const after = await Promise.all(set.hosts.map(rounds));
    return new Map(set.hosts.map((h, i) => [h, after[i]! - before[i]!]));
  };

  it('runs on the primary only, and after a step-down on the new primary only', { timeout: 180_000 }, async () => {
    const first = await primaryOf(p, set);
    const ran = await roundsMeanwhile();
    for (const host of set.hosts) {
      if (host === first) assert.ok(ran.get(host)! > 0, `the primary ${host} ran no round`);
      else assert.equal(ran.get(host), 0, `the secondary ${host} ran rounds`);
    }

    await stepDown(direct(p, first));
    const second = await primaryOf(p, set, first);
    // The deposed primary's last round, if one was running, has ended by the time it answers.
    await sleep(500);
    const after = await roundsMeanwhile();
    for (const host of set.hosts) {
      if (host === second) assert.ok(after.get(host)! > 0, `the new primary ${host} ran no round`);
      else assert.equal(after.get(host), 0, `${host} (${host === first ? 'the old primary' : 'a secondary'}) ran rounds`);
    }
  });
});
