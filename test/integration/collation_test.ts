import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc, SpawnedNode } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// Issue 19: a collection's default collation (create's `collation`) applies to its queries, sorts
// and writes as in MongoDB, on a node and through a router; collection kinds docshard does not
// have (time series, clustered) are refused, not created plain.
describe('a collection\'s default collation', () => {
  let node: SpawnedNode;
  let cluster: SpawnedCluster;
  const clients: MongoClient[] = [];
  const targets: [string, () => Db][] = [];

  withProcesses(async (p) => {
    [node, cluster] = await Promise.all([p.node(), p.cluster({ shards: 2 })]);
    const direct = p.connect(node.uri);
    const routed = p.connect(cluster.routers[0]!.uri);
    clients.push(direct, routed);
    targets.push(['a node', () => direct.db('coll')], ['a router', () => routed.db('coll')]);
  });

  for (const [where, db] of [['a node', 0], ['a router', 1]] as const) {
    it(`on ${where}: {locale: 'en', strength: 2} matches 'a' and 'A', sorts and counts by it; {locale: 'simple'} overrides it`, async () => {
      const d = targets[db]![1]();
      await d.createCollection('ci', { collation: { locale: 'en', strength: 2 } });
      const [info] = await d.listCollections({ name: 'ci' }).toArray();
      assert.deepEqual((info as AnyDoc).options.collation, {
        locale: 'en', caseLevel: false, caseFirst: 'off', strength: 2, numericOrdering: false, alternate: 'non-ignorable',
        maxVariable: 'punct', normalization: false, backwards: false, version: '57.1',
      });
      const c = d.collection<AnyDoc>('ci');
      await c.insertMany([{ _id: 1, x: 'a' }, { _id: 2, x: 'A' }, { _id: 3, x: 'b' }, { _id: 4, x: 'B' }]);
      assert.deepEqual((await c.find({ x: 'a' }).toArray()).map((x) => x._id).sort(), [1, 2]);
      assert.equal(await c.countDocuments({ x: 'b' }), 2);
      assert.deepEqual((await c.distinct('x')).map((v: string) => v.toLowerCase()).sort(), ['a', 'b']);
      assert.deepEqual((await c.aggregate([{ $match: { x: 'B' } }, { $sort: { _id: 1 } }]).toArray()).map((x) => x._id), [3, 4]);
      assert.deepEqual((await c.find({ x: 'a' }, { collation: { locale: 'simple' } }).toArray()).map((x) => x._id), [1]);
      const updated = await c.updateMany({ x: 'a' }, { $set: { seen: true } });
      assert.equal(updated.modifiedCount, 2);
      assert.equal((await c.deleteOne({ x: 'B', _id: 4 })).deletedCount, 1);
      assert.equal((await c.findOneAndUpdate({ x: 'b' }, { $set: { last: true } }))?._id, 3);
    });

    it(`on ${where}: an index on a collated collection takes its collation, unless it says {locale: 'simple'}`, async () => {
      const c = targets[db]![1]().collection<AnyDoc>('ci');
      await c.createIndex({ u: 1 }, { unique: true, sparse: true });
      await c.insertOne({ _id: 10, u: 'Q' });
      await assert.rejects(c.insertOne({ _id: 11, u: 'q' }), { code: 11000 });
      await c.createIndex({ v: 1 }, { unique: true, sparse: true, collation: { locale: 'simple' } });
      await c.insertMany([{ _id: 12, v: 'Q' }, { _id: 13, v: 'q' }]);
      await c.createIndex({ x: 1 });
      assert.deepEqual((await c.find({ x: 'A' }).toArray()).map((x) => x._id).sort(), [1, 2], 'the index follows the collation');
    });

    it(`on ${where}: time series and clustered collections are refused with NotImplemented`, async () => {
      const d = targets[db]![1]();
      await assert.rejects(d.createCollection('ts', { timeseries: { timeField: 't' } }), { code: 238 });
      await assert.rejects(d.createCollection('cl', { clusteredIndex: { key: { _id: 1 }, unique: true } }), { code: 238 });
      assert.deepEqual(await d.listCollections({ name: { $in: ['ts', 'cl'] } }).toArray(), []);
    });
  }

  it('shardCollection of a collection with a default collation is refused', async () => {
    const admin = clients[1]!.db('admin');
    await assert.rejects(admin.command({ shardCollection: 'coll.ci', key: { _id: 1 } }), { code: 238 });
  });
});
