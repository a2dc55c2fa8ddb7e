import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoServerError, type Db } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// Issue 35: indexes with a collation. Their keys follow the collation (a unique one under
// {locale: 'en', strength: 2} makes 'Ada' and 'ada' collide), a query under the same collation
// uses them and one under another does not bound strings by them, listIndexes shows the collation
// whole, and an index created without one takes the collection's. The examples of MongoDB's
// manual (case-insensitive indexes, collation and index use), on a node and through a router over
// collections sharded on _id with documents on two shards.

const DB = 'icoll';
const FULL_EN_2 = {
  locale: 'en', caseLevel: false, caseFirst: 'off', strength: 2, numericOrdering: false, alternate: 'non-ignorable',
  maxVariable: 'punct', normalization: false, backwards: false, version: '57.1',
};

// The indexes the plan (a node's, or every shard's through a router) reads.
function indexesUsed(explain: AnyDoc): string[] {
  const names = new Set<string>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === 'object') {
      const o = v as AnyDoc;
      if (o.stage === 'IXSCAN') names.add(String(o.indexName));
      for (const [k, x] of Object.entries(o)) if (k !== 'command') visit(x);
    }
  };
  visit(explain.queryPlanner);
  return [...names];
}

function ids(docs: AnyDoc[]): unknown[] {
  return docs.map((d) => d._id).sort();
}

describe('index collations', () => {
  const targets: [string, Db, (coll: string, key?: string) => Promise<void>][] = [];

  withProcesses(async (p) => {
    const [node, cluster] = await Promise.all([p.node(), p.cluster({ shards: 2 })]);
    const routed = p.connect(cluster.routers[0]!.uri);
    const admin = routed.db('admin');
    await admin.command({ enableSharding: DB, primaryShard: 'shard1' });
    const shard = async (coll: string, key = '_id'): Promise<void> => {
      const ns = `${DB}.${coll}`;
      await admin.command({ shardCollection: ns, key: { [key]: 1 } });
      await admin.command({ split: ns, middle: { [key]: 2 } });
      await admin.command({ moveChunk: ns, find: { [key]: 0 }, to: 'shard0', _waitForDelete: true });
    };
    targets.push(['a node', p.connect(node.uri).db(DB), async () => {}], ['a router', routed.db(DB), shard]);
  });

  for (const which of [0, 1]) {
    const where = which === 0 ? 'a node' : 'a router over a collection sharded on _id';

    it(`on ${where}: the manual's case-insensitive index example`, async () => {
      const [, db, shard] = targets[which]!;
      await shard('fruit');
      const fruit = db.collection<AnyDoc>('fruit');
      await fruit.createIndex({ type: 1 }, { collation: { locale: 'en', strength: 2 } });
      await fruit.insertMany([{ _id: 1, type: 'apple' }, { _id: 2, type: 'Apple' }, { _id: 3, type: 'APPLE' }]);
      const ci = { locale: 'en', strength: 2 };
      assert.deepEqual(ids(await fruit.find({ type: 'apple' }).toArray()), [1]);
      assert.deepEqual(indexesUsed(await fruit.find({ type: 'apple' }).explain('queryPlanner')), []);
      assert.deepEqual(ids(await fruit.find({ type: 'apple' }).collation(ci).toArray()), [1, 2, 3]);
      assert.deepEqual(indexesUsed(await fruit.find({ type: 'apple' }).collation(ci).explain('queryPlanner')), ['type_1']);
      const primary = { locale: 'en', strength: 1 };
      assert.deepEqual(ids(await fruit.find({ type: 'apple' }).collation(primary).toArray()), [1, 2, 3]);
      assert.deepEqual(indexesUsed(await fruit.find({ type: 'apple' }).collation(primary).explain('queryPlanner')), []);
      assert.deepEqual(ids(await fruit.find({ type: { $in: ['APPLE', 'pear'] } }).collation(ci).toArray()), [1, 2, 3]);
      assert.equal(await fruit.countDocuments({ type: 'aPPle' }, { collation: ci }), 3);
      assert.deepEqual(ids(await fruit.aggregate([{ $match: { type: 'Apple' } }], { collation: ci }).toArray()), [1, 2, 3]);
      const [, spec] = await fruit.listIndexes().toArray();
      assert.deepEqual(spec, { v: 2, key: { type: 1 }, name: 'type_1', collation: FULL_EN_2 });
      // One key under two collations is two indexes: each query takes its own, and only a name
      // says which one to drop.
      await fruit.createIndex({ type: 1 }, { name: 'type_binary' });
      assert.deepEqual(indexesUsed(await fruit.find({ type: 'apple' }).explain('queryPlanner')), ['type_binary']);
      assert.deepEqual(indexesUsed(await fruit.find({ type: 'apple' }).collation(ci).explain('queryPlanner')), ['type_1']);
      await assert.rejects(fruit.dropIndex({ type: 1 } as unknown as string), { code: 181, codeName: 'AmbiguousIndexKeyPattern' });
      await fruit.dropIndex('type_binary');
    });

    it(`on ${where}: the manual's index and query collation example (locale fr)`, async () => {
      const [, db, shard] = targets[which]!;
      await shard('myColl');
      const c = db.collection<AnyDoc>('myColl');
      await c.createIndex({ category: 1 }, { collation: { locale: 'fr' } });
      await c.insertMany([{ _id: 1, category: 'café' }, { _id: 2, category: 'cafe' }, { _id: 3, category: 'cafE' }]);
      assert.deepEqual(indexesUsed(await c.find({ category: 'cafe' }).collation({ locale: 'fr' }).explain('queryPlanner')), ['category_1']);
      assert.deepEqual(ids(await c.find({ category: 'cafe' }).collation({ locale: 'fr' }).toArray()), [2]);
      assert.deepEqual(indexesUsed(await c.find({ category: 'cafe' }).explain('queryPlanner')), []);
      // A number is not compared by a collation: any query may bound it by the index.
      await c.insertOne({ _id: 4, category: 7 });
      assert.deepEqual(indexesUsed(await c.find({ category: 7 }).explain('queryPlanner')), ['category_1']);
      assert.deepEqual(ids(await c.find({ category: 7 }).toArray()), [4]);
    });

    it(`on ${where}: a unique index under {locale: 'en', strength: 2} makes 'Ada' and 'ada' collide`, async () => {
      const [, db, shard] = targets[which]!;
      await shard('people', 'k');
      const people = db.collection<AnyDoc>('people');
      // Through a router a unique index leads with the shard key, so that one shard decides.
      await people.createIndex({ k: 1, name: 1 }, { unique: true, collation: { locale: 'en', strength: 2 } });
      await people.insertMany([{ _id: 1, k: 1, name: 'Ada' }, { _id: 2, k: 3, name: 'Ada' }]);
      await assert.rejects(people.insertOne({ _id: 5, k: 1, name: 'ada' }), (e: unknown) => {
        assert.ok(e instanceof MongoServerError, String(e));
        assert.equal(e.code, 11000);
        assert.match(e.message, /E11000 duplicate key error collection: icoll\.people index: k_1_name_1 collation: \{ locale: "en".*dup key: \{ k: 1, name: "0x/);
        return true;
      });
      await assert.rejects(people.insertOne({ _id: 7, k: 3, name: 'ADA' }), { code: 11000 });
      await people.insertOne({ _id: 6, k: 1, name: 'Adà' });
      await assert.rejects(people.updateOne({ _id: 6 }, { $set: { name: 'aDa' } }), { code: 11000 });
      assert.deepEqual(ids(await people.find({}).toArray()), [1, 2, 6]);
    });

    it(`on ${where}: an index created without a collation takes the collection's default, as the manual's names example`, async () => {
      const [, db] = targets[which]!;
      await db.createCollection('names', { collation: { locale: 'en_US', strength: 2 } });
      const names = db.collection<AnyDoc>('names');
      await names.createIndex({ first_name: 1 });
      await names.createIndex({ last_name: 1 }, { collation: { locale: 'simple' } });
      const specs = await names.listIndexes().toArray();
      assert.deepEqual(specs.find((s) => s.name === 'first_name_1')!.collation, { ...FULL_EN_2, locale: 'en_US' });
      assert.equal(specs.find((s) => s.name === 'last_name_1')!.collation, undefined);
      await names.insertMany([{ _id: 1, first_name: 'Betsy' }, { _id: 2, first_name: 'BETSY' }, { _id: 3, first_name: 'betsy' }]);
      assert.deepEqual(ids(await names.find({ first_name: 'betsy' }).toArray()), [1, 2, 3]);
      assert.deepEqual(indexesUsed(await names.find({ first_name: 'betsy' }).explain('queryPlanner')), ['first_name_1']);
      assert.deepEqual(ids(await names.find({ first_name: 'betsy' }).collation({ locale: 'en_US' }).toArray()), [3]);
      assert.deepEqual(indexesUsed(await names.find({ first_name: 'betsy' }).collation({ locale: 'en_US' }).explain('queryPlanner')), []);
      // The _id index is one of them.
      assert.deepEqual(specs.find((s) => s.name === '_id_')!.collation, { ...FULL_EN_2, locale: 'en_US' });
      const [info] = await db.listCollections({ name: 'names' }).toArray();
      assert.deepEqual((info as AnyDoc).idIndex.collation, { ...FULL_EN_2, locale: 'en_US' });
      await names.insertOne({ _id: 'x', first_name: 'Xena' });
      await assert.rejects(names.insertOne({ _id: 'X' }), { code: 11000 });
      assert.deepEqual(await names.findOne({ _id: 'X' }), { _id: 'x', first_name: 'Xena' });
      assert.equal(await names.findOne({ _id: 'X' }, { collation: { locale: 'simple' } }), null);
      await names.deleteOne({ _id: 'X' });
      await names.createIndex({ email: 1 }, { unique: true, sparse: true });
      await names.insertOne({ _id: 4, email: 'Ada@example.org' });
      await assert.rejects(names.insertOne({ _id: 5, email: 'ada@EXAMPLE.org' }), { code: 11000 });
    });

    it(`on ${where}: a bad index collation is refused, and the server keeps serving`, async () => {
      const [, db] = targets[which]!;
      const c = db.collection<AnyDoc>('bad');
      await assert.rejects(c.createIndex({ a: 1 }, { collation: { locale: 'xx_nope' } }), { code: 2 });
      await assert.rejects(c.createIndex({ a: 1 }, { collation: { locale: 'en', strength: 9 } }), { code: 2 });
      // A locale whose tailoring the index keys cannot follow: refused, not built wrong.
      await assert.rejects(c.createIndex({ a: 1 }, { collation: { locale: 'sv', strength: 1 } }), { code: 238 });
      // A collection default of such a locale: its _id index and a non-unique index stay simple
      // (queries under the collation do not bound strings by them); a unique one is refused.
      await db.createCollection('swedish', { collation: { locale: 'sv', strength: 1 } });
      const sv = db.collection<AnyDoc>('swedish');
      await sv.createIndex({ a: 1 });
      await assert.rejects(sv.createIndex({ b: 1 }, { unique: true }), { code: 238 });
      assert.deepEqual((await sv.listIndexes().toArray()).map((s) => s.collation), [undefined, undefined]);
      await sv.insertMany([{ _id: 1, a: 'ä' }, { _id: 2, a: 'a' }]);
      assert.deepEqual(ids(await sv.find({ a: 'a' }).toArray()), [2]);
      await assert.rejects(db.command({ createIndexes: 'bad', indexes: [{ key: { a: 1 }, name: 'a', collation: 'en' }] }), { code: 14 });
      await c.insertOne({ _id: 1, a: 'x' });
      assert.equal(await c.countDocuments({}), 1);
    });
  }
});
