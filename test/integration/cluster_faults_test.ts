import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError, type Collection } from 'mongodb';
import { waitFor } from '../helpers/balancer_util.js';
import { spawnRouter, type SpawnedCluster } from '../helpers/spawn_cluster.js';
import { restartNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';

const DOCS = 1000;
// Cursor ids stay Longs, to be sent back in getMore.
const RAW = { promoteLongs: false };
const SPLIT = 500;

// Routers, shards and the config server killed with SIGKILL in turn: the router answers what it
// can while a shard or the config server is gone (its cached routing table is enough for reads and
// writes), says clearly what it cannot, picks the process up again when it is back, and no write
// the client saw acknowledged is lost.
describe('a cluster through kill -9 of its processes', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let coll: Collection<AnyDoc>;
  // What the cluster acknowledged, by _id: the document as the client last saw it written.
  const acknowledged = new Map<number, AnyDoc>();

  const connect = (): void => {
    client = new MongoClient(cluster.routers[0]!.uri, { retryWrites: false, serverSelectionTimeoutMS: 5000 });
    coll = client.db('faults').collection<AnyDoc>('docs');
  };

  withCluster({ shards: 2 }, async (f) => {
    cluster = f.cluster;
    connect();
    // A test makes a new client after it restarts the router: the last one is closed.
    f.processes.beforeStop(() => client.close());
    const admin = client.db('admin');
    await admin.command({ enableSharding: 'faults', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'faults.docs', key: { k: 1 } });
    await admin.command({ split: 'faults.docs', middle: { k: SPLIT } });
    await admin.command({ moveChunk: 'faults.docs', find: { k: SPLIT }, to: 'shard1' });
    const docs = Array.from({ length: DOCS }, (_, i) => ({ _id: i, k: i, v: 0 }));
    await coll.insertMany(docs);
    for (const d of docs) acknowledged.set(d._id, d);
  });

  async function assertAllAcknowledged(): Promise<void> {
    const all = await coll.find({}).sort({ _id: 1 }).toArray();
    assert.equal(all.length, acknowledged.size);
    for (const d of all) assert.deepEqual(d, acknowledged.get(d._id), `document ${d._id}`);
  }

  it('serves the live shard while the other is killed, refuses the dead one\'s range clearly, and resumes when it is back', async () => {
    await coll.updateMany({ k: { $gte: SPLIT - 10, $lt: SPLIT + 10 } }, { $set: { v: 1 } });
    for (let k = SPLIT - 10; k < SPLIT + 10; k++) acknowledged.set(k, { _id: k, k, v: 1 });
    const db = client.db('faults');
    const whole = await db.command({ find: 'docs', allowPartialResults: true, batchSize: DOCS }, RAW);
    assert.equal(whole.cursor.firstBatch.length, DOCS);
    assert.equal(whole.cursor.partialResultsReturned, undefined, 'nothing was left out');
    // A cursor open on both shards when one goes away.
    const open = await db.command({ find: 'docs', filter: {}, allowPartialResults: true, batchSize: 10 }, RAW);
    assert.equal(open.cursor.partialResultsReturned, undefined);

    await cluster.shards[1]!.kill9();

    assert.deepEqual(await coll.findOne({ k: 10 }), acknowledged.get(10));
    await coll.insertOne({ _id: 2000, k: 20, v: 0 });
    acknowledged.set(2000, { _id: 2000, k: 20, v: 0 });
    const unreachable = (err: unknown): boolean => err instanceof MongoServerError && err.code === 6 && err.codeName === 'HostUnreachable';
    await assert.rejects(coll.findOne({ k: SPLIT + 100 }), unreachable);
    await assert.rejects(coll.insertOne({ _id: 2001, k: SPLIT + 1, v: 0 }), unreachable);
    // A read that needs every shard fails as a whole rather than answering with half the data...
    await assert.rejects(coll.countDocuments({}), unreachable);
    await assert.rejects(coll.find({}).toArray(), unreachable);
    // ...unless the find allows partial results: then the live shard's documents, flagged in every batch.
    const onShard0 = [...acknowledged.values()].filter((d) => d.k < SPLIT).length;
    const first = await db.command({ find: 'docs', allowPartialResults: true, batchSize: 100 }, RAW);
    assert.equal(first.cursor.partialResultsReturned, true);
    let seen = first.cursor.firstBatch.length;
    for (let id = first.cursor.id; !id.isZero();) {
      const more = await db.command({ getMore: id, collection: 'docs' }, RAW);
      assert.equal(more.cursor.partialResultsReturned, true);
      seen += more.cursor.nextBatch.length;
      id = more.cursor.id;
    }
    assert.equal(seen, onShard0);
    assert.equal((await coll.find({}, { allowPartialResults: true }).toArray()).length, onShard0);
    const targeted = await db.command({ find: 'docs', filter: { k: SPLIT + 100 }, allowPartialResults: true }, RAW);
    assert.deepEqual(targeted.cursor.firstBatch, []);
    assert.equal(targeted.cursor.partialResultsReturned, true);
    // The cursor opened before the kill ends without an error once the dead shard's getMore fails,
    // and says from then on that results were left out.
    let flagged = false;
    for (let id = open.cursor.id; !id.isZero();) {
      const more = await db.command({ getMore: id, collection: 'docs', batchSize: 200 }, RAW);
      flagged ||= more.cursor.partialResultsReturned === true;
      id = more.cursor.id;
    }
    assert.ok(flagged, 'a batch after the shard was lost says results were left out');
    assert.equal((await client.db('admin').command({ ping: 1 })).ok, 1);

    cluster.shards[1] = await restartNode(cluster.shards[1]!, { role: 'shard' });
    await waitFor('the router to reach the restarted shard', async () => (await coll.findOne({ k: SPLIT + 100 }).catch(() => null)) ?? undefined);
    await coll.insertOne({ _id: 2001, k: SPLIT + 1, v: 0 });
    acknowledged.set(2001, { _id: 2001, k: SPLIT + 1, v: 0 });
    await assertAllAcknowledged();
  });

  it('keeps serving from its cached routing while the config server is down, and refuses catalog work until it is back', async () => {
    await cluster.config.kill9();

    assert.deepEqual(await coll.findOne({ k: SPLIT + 100 }), acknowledged.get(SPLIT + 100));
    await coll.insertOne({ _id: 2002, k: SPLIT + 3, v: 0 });
    acknowledged.set(2002, { _id: 2002, k: SPLIT + 3, v: 0 });
    await coll.updateMany({ k: { $gte: 300, $lt: 310 } }, { $set: { v: 2 } });
    for (let k = 300; k < 310; k++) acknowledged.set(k, { _id: k, k, v: 2 });
    await assertAllAcknowledged();
    const unreachable = (err: unknown): boolean => err instanceof MongoServerError && err.code === 6;
    await assert.rejects(client.db('admin').command({ split: 'faults.docs', middle: { k: 250 } }), unreachable);
    await assert.rejects(client.db('faults_new').collection('c').insertOne({ a: 1 }), unreachable, 'a new database needs the config server');
    await assert.rejects(client.db('config').collection('chunks').countDocuments({}), unreachable);

    cluster.config = await restartNode(cluster.config, { role: 'config' });
    await waitFor('the router to reach the restarted config server', async () => (await client.db('admin').command({ split: 'faults.docs', middle: { k: 250 } }).catch(() => undefined))?.ok === 1);
    await client.db('faults_new').collection('c').insertOne({ a: 1 });
    const config = client.db('config');
    const { uuid } = (await config.collection<AnyDoc>('collections').findOne({ _id: 'faults.docs' as AnyDoc }))!;
    assert.equal(await config.collection('chunks').countDocuments({ uuid }), 3, 'the split at 250 was committed');
  });

  it('keeps every acknowledged write after the config server, both shards and the router are killed and started again', async () => {
    await coll.deleteMany({ k: { $gte: 100, $lt: 110 } });
    for (let k = 100; k < 110; k++) acknowledged.delete(k);
    await coll.updateOne({ k: SPLIT + 200 }, { $set: { v: 7 } });
    acknowledged.set(SPLIT + 200, { _id: SPLIT + 200, k: SPLIT + 200, v: 7 });

    process.kill(cluster.routers[0]!.pid!, 'SIGKILL');
    await Promise.all([cluster.config.kill9(), ...cluster.shards.map((s) => s.kill9())]);
    await client.close();

    cluster.config = await restartNode(cluster.config, { role: 'config' });
    cluster.shards = await Promise.all(cluster.shards.map((s) => restartNode(s, { role: 'shard' })));
    cluster.routers[0] = await spawnRouter(cluster.config.port);
    connect();

    await assertAllAcknowledged();
    // The routing table came back from the config server: a point read reaches one shard only.
    const explain = await coll.find({ k: SPLIT + 200 }).explain();
    assert.deepEqual(explain.queryPlanner.winningPlan.shards.map((s: AnyDoc) => s.shardName), ['shard1']);
    await coll.insertMany([{ _id: 3000, k: 1, v: 0 }, { _id: 3001, k: SPLIT + 2, v: 0 }]);
    assert.equal(await coll.countDocuments({ _id: { $gte: 3000 } }), 2);
  });
});
