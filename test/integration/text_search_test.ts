import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Db, MongoClient } from 'mongodb';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withProcesses } from '../helpers/fixtures.js';

// Issue 35, text search: `text` indexes and $text with the examples of MongoDB's manual ($text,
// Text Indexes), giving the documented results, on one node and through a router over
// collections sharded on another key, and MongoDB's errors for bad input.
const STORES = [
  { _id: 1, k: 1, name: 'Java Hut', description: 'Coffee and cakes' },
  { _id: 2, k: 2, name: 'Burger Buns', description: 'Gourmet hamburgers' },
  { _id: 3, k: 3, name: 'Coffee Shop', description: 'Just coffee' },
  { _id: 4, k: 4, name: 'Clothes Clothes Clothes', description: 'Discount clothing' },
  { _id: 5, k: 5, name: 'Java Shopping', description: 'Indonesian goods' },
];

const ARTICLES = [
  { _id: 1, k: 1, subject: 'coffee', author: 'xyz', views: 50 },
  { _id: 2, k: 2, subject: 'Coffee Shopping', author: 'efg', views: 5 },
  { _id: 3, k: 3, subject: 'Baking a cake', author: 'abc', views: 90 },
  { _id: 4, k: 4, subject: 'baking', author: 'xyz', views: 100 },
  { _id: 5, k: 5, subject: 'Café Con Leche', author: 'abc', views: 200 },
  { _id: 6, k: 6, subject: 'Сырники', author: 'efg', views: 80 },
  { _id: 7, k: 7, subject: 'coffee and cream', author: 'efg', views: 10 },
  { _id: 8, k: 8, subject: 'Cafe con Leche', author: 'xyz', views: 10 },
];

const ids = (docs: AnyDoc[]): unknown[] => docs.map((d) => d._id).sort();

describe('text indexes and $text', () => {
  const targets: [string, () => Db][] = [];

  withProcesses(async (p) => {
    const [node, cluster] = await Promise.all([p.node(), p.cluster({ shards: 2 })]);
    const direct: MongoClient = p.connect(node.uri);
    const routed: MongoClient = p.connect(cluster.routers[0]!.uri);
    const admin = routed.db('admin');
    await admin.command({ enableSharding: 'text', primaryShard: 'shard0' });
    for (const coll of ['stores', 'articles']) {
      await admin.command({ shardCollection: `text.${coll}`, key: { k: 1 } });
      await admin.command({ split: `text.${coll}`, middle: { k: 3 } });
      await admin.command({ moveChunk: `text.${coll}`, find: { k: 5 }, to: 'shard1', _waitForDelete: true });
    }
    for (const db of [direct.db('text'), routed.db('text')]) {
      await db.collection<AnyDoc>('stores').insertMany(STORES);
      await db.collection('stores').createIndex({ name: 'text', description: 'text' });
      await db.collection<AnyDoc>('articles').insertMany(ARTICLES);
      await db.collection('articles').createIndex({ subject: 'text' });
    }
    targets.push(['one node', () => direct.db('text')], ['a router over two shards', () => routed.db('text')]);
    routerAdmin = admin;
  });

  let routerAdmin: Db;

  it('through a router: a chunk moved after the text index was built takes the index to its new shard', async () => {
    const db = targets[1]![1]();
    await routerAdmin.command({ shardCollection: 'text.moved', key: { k: 1 } });
    await db.collection<AnyDoc>('moved').insertMany(STORES);
    await db.collection('moved').createIndex({ name: 'text', description: 'text' });
    await routerAdmin.command({ split: 'text.moved', middle: { k: 3 } });
    await routerAdmin.command({ moveChunk: 'text.moved', find: { k: 5 }, to: 'shard1', _waitForDelete: true });
    const found = await db.collection<AnyDoc>('moved').find({ $text: { $search: 'java coffee shop' } }, { projection: { score: { $meta: 'textScore' } } })
      .sort({ score: { $meta: 'textScore' } }).toArray();
    assert.deepEqual(found.map((d) => d.score), [2.25, 1.5, 1.5]);
    assert.deepEqual(ids(found), [1, 3, 5]);
  });

  it('on one node: $text reads the text index, not the collection', async () => {
    const explain = await targets[0]![1]().collection('articles').find({ $text: { $search: 'coffee' } }).explain('executionStats');
    assert.match(JSON.stringify(explain.queryPlanner.winningPlan), /"indexName":"subject_text"/);
    assert.equal(explain.executionStats.nReturned, 3);
    assert.equal(explain.executionStats.totalDocsExamined, 3, 'only the documents holding the term are read, of 8');
    const plan = explain.queryPlanner.winningPlan;
    assert.deepEqual([plan.stage, plan.indexName, plan.parsedTextQuery, plan.inputStage.stage, plan.inputStage.inputStage.stage],
      ['TEXT_MATCH', 'subject_text', { terms: ['coffe'], negatedTerms: [], phrases: [], negatedPhrases: [] }, 'FETCH', 'IXSCAN']);
    const scored = await targets[0]![1]().collection('articles').find({ $text: { $search: 'coffee cake -leche' } }, { projection: { s: { $meta: 'textScore' } } }).explain('queryPlanner');
    const match = scored.queryPlanner.winningPlan.inputStage;
    const textOr = match.inputStage;
    assert.deepEqual([scored.queryPlanner.winningPlan.stage, match.stage, match.parsedTextQuery.negatedTerms], ['PROJECTION_DEFAULT', 'TEXT_MATCH', ['lech']]);
    assert.deepEqual([textOr.stage, textOr.inputStages.map((s: AnyDoc) => s.indexBounds._fts[0])], ['TEXT_OR', ['["coffe", "coffe"]', '["cake", "cake"]']]);
  });

  for (const [where, at] of [['one node', 0], ['a router over two shards', 1]] as const) {
    const db = (): Db => targets[at]![1]();

    it(`on ${where}: $text as a clause of $or, whose other clauses have an index`, async () => {
      await db().collection('articles').createIndex({ views: 1 });
      const found = await db().collection<AnyDoc>('articles').find({ $or: [{ $text: { $search: 'coffee' } }, { views: { $gte: 100 } }] }).toArray();
      assert.deepEqual(ids(found), [1, 2, 4, 5, 7]);
      await assert.rejects(db().collection('articles').find({ $or: [{ $text: { $search: 'coffee' } }, { author: 'abc' }] }).toArray(), (e: AnyDoc) => e.code === 291);
    });

    it(`on ${where}: the index is listed as MongoDB lists it`, async () => {
      const indexes = await db().collection('stores').listIndexes().toArray();
      const text = indexes.find((i) => i.name === 'name_text_description_text');
      assert.deepEqual(text?.key, { _fts: 'text', _ftsx: 1 });
      assert.deepEqual(text?.weights, { description: 1, name: 1 });
      assert.equal(text?.default_language, 'english');
      assert.equal(text?.language_override, 'language');
      assert.equal(text?.textIndexVersion, 3);
    });

    it(`on ${where}: the stores example: terms, a phrase, a negation, and scores sorted`, async () => {
      const stores = db().collection<AnyDoc>('stores');
      assert.deepEqual(ids(await stores.find({ $text: { $search: 'java coffee shop' } }).toArray()), [1, 3, 5]);
      assert.deepEqual(ids(await stores.find({ $text: { $search: '"coffee shop"' } }).toArray()), [3]);
      assert.deepEqual(ids(await stores.find({ $text: { $search: 'java shop -coffee' } }).toArray()), [5]);
      const scored = await stores.find({ $text: { $search: 'java coffee shop' } }, { projection: { score: { $meta: 'textScore' } } })
        .sort({ score: { $meta: 'textScore' } }).toArray();
      assert.deepEqual(scored.map((d) => d._id).slice(0, 1), [3]);
      assert.deepEqual(scored.map((d) => d.score), [2.25, 1.5, 1.5]);
      assert.equal(scored[0]!.name, 'Coffee Shop', 'a projection of only $meta keeps the fields');
      const unprojected = await stores.find({ $text: { $search: 'java coffee shop' } }).sort({ score: { $meta: 'textScore' }, _id: 1 }).toArray();
      assert.deepEqual(unprojected.map((d) => d._id), [3, 1, 5], 'sorted by the score without showing it, ties by _id');
      assert.equal(unprojected[0]!.score, undefined);
    });

    it(`on ${where}: the articles example of the $text page`, async () => {
      const articles = db().collection<AnyDoc>('articles');
      const search = async (text: AnyDoc): Promise<unknown[]> => ids(await articles.find({ $text: text }).toArray());
      assert.deepEqual(await search({ $search: 'coffee' }), [1, 2, 7]);
      assert.deepEqual(await search({ $search: 'bake coffee cake' }), [1, 2, 3, 4, 7]);
      assert.deepEqual(await search({ $search: '"coffee shop"' }), [2]);
      assert.deepEqual(await search({ $search: 'coffee -shop' }), [1, 7]);
      assert.deepEqual(await search({ $search: 'leche' }), [5, 8]);
      assert.deepEqual(await search({ $search: 'Coffee', $caseSensitive: true }), [2]);
      assert.deepEqual(await search({ $search: '"Café Con Leche"', $caseSensitive: true }), [5]);
      assert.deepEqual(await search({ $search: 'Coffee -shop', $caseSensitive: true }), [2]);
      assert.deepEqual(await search({ $search: 'CAFÉ', $diacriticSensitive: true }), [5]);
      assert.deepEqual(await search({ $search: 'leches -cafés', $diacriticSensitive: true }), [8]);
      assert.deepEqual(await search({ $search: 'the and a' }), [], 'stop words alone find nothing');
      const cake = await articles.find({ $text: { $search: 'cake' } }, { projection: { score: { $meta: 'textScore' } } })
        .sort({ score: { $meta: 'textScore' } }).toArray();
      assert.deepEqual(cake, [{ _id: 3, k: 3, subject: 'Baking a cake', author: 'abc', views: 90, score: 0.75 }]);
      assert.deepEqual(ids(await articles.find({ $text: { $search: 'coffee' }, views: { $gt: 20 } }).toArray()), [1], 'the rest of the filter applies');
      assert.equal(await articles.countDocuments({ $text: { $search: 'coffee' } }), 3);
    });

    it(`on ${where}: $text in aggregate: $match first, then $sort, $project and $addFields by the score`, async () => {
      const stores = db().collection<AnyDoc>('stores');
      const sorted = await stores.aggregate([
        { $match: { $text: { $search: 'java coffee shop' } } },
        { $sort: { score: { $meta: 'textScore' } } },
        { $project: { name: 1, _id: 0, score: { $meta: 'textScore' } } },
      ]).toArray();
      assert.deepEqual(sorted[0], { name: 'Coffee Shop', score: 2.25 });
      assert.deepEqual(sorted.map((d) => d.score), [2.25, 1.5, 1.5]);
      const added = await stores.aggregate([
        { $match: { $text: { $search: 'coffee' } } },
        { $addFields: { s: { $meta: 'textScore' } } },
        { $match: { s: { $gt: 1 } } },
        { $sort: { _id: 1 } },
      ]).toArray();
      assert.deepEqual(added.map((d) => [d._id, d.s]), [[3, 1.5]]);
      const total = await db().collection('articles').aggregate([
        { $match: { $text: { $search: 'cake' } } },
        { $group: { _id: null, views: { $sum: '$views' } } },
      ]).toArray();
      assert.deepEqual(total, [{ _id: null, views: 90 }]);
    });

    it(`on ${where}: writes keep the index in step; a compound index's prefix, weights, and languages`, async () => {
      const c = db().collection<AnyDoc>('blog');
      await c.createIndex({ shop: 1, title: 'text', body: 'text' }, { weights: { title: 10 }, name: 'blog_text' });
      await c.insertMany([
        { _id: 1, shop: 'a', title: 'Running shoes', body: 'for the road' },
        { _id: 2, shop: 'a', title: 'Road bikes', body: 'running is slower' },
        { _id: 3, shop: 'b', title: 'Running', body: '' },
        { _id: 4, shop: 'a', title: 'running', body: 'x', language: 'none' },
      ]);
      const run = async (search: AnyDoc): Promise<AnyDoc[]> => c.find({ shop: 'a', $text: search }, { projection: { _id: 1, s: { $meta: 'textScore' } } })
        .sort({ s: { $meta: 'textScore' } }).toArray();
      assert.deepEqual(await run({ $search: 'run' }), [{ _id: 1, s: 7.5 }, { _id: 2, s: 0.75 }], 'the title weighs 10, and _id 4 is indexed unstemmed');
      assert.deepEqual(await run({ $search: 'running', $language: 'none' }), [{ _id: 4, s: 10 }]);
      await assert.rejects(c.find({ $text: { $search: 'run' } }).toArray(), { code: 2, message: /are equality predicates given for all prefix fields/ });
      await c.updateOne({ _id: 2 }, { $set: { body: 'walking' } });
      await c.deleteOne({ _id: 1 });
      assert.deepEqual(await run({ $search: 'run' }), []);
      assert.deepEqual(await run({ $search: 'walk' }), [{ _id: 2, s: 1 }]);
      assert.equal((await c.updateMany({ shop: 'a', $text: { $search: 'walk' } }, { $set: { hit: true } })).modifiedCount, 1, 'an update finds its documents by $text');
      assert.equal((await c.deleteMany({ shop: 'b', $text: { $search: 'running' } })).deletedCount, 1, 'so does a delete');
      await c.insertOne({ _id: 3, shop: 'b', title: 'Running', body: '' });
      await assert.rejects(c.insertOne({ _id: 5, shop: 'a', title: 'x', language: 'klingon' }), { code: 17262, message: 'language override unsupported: klingon' });
      await assert.rejects(c.insertOne({ _id: 6, shop: ['a', 'b'], title: 'x' }), { code: 16675 });
      assert.equal(await c.countDocuments({}), 3);
      await c.insertOne({ _id: 7, shop: 'a', title: 'the' });
      assert.deepEqual(ids(await c.find({ shop: 'a' }).sort({ shop: 1 }).toArray()), [2, 4, 7], 'a query on the prefix field reads the collection, not the text index, which lacks _id 7');
      const wild = db().collection<AnyDoc>('wild');
      await wild.createIndex({ '$**': 'text' });
      await wild.insertMany([{ _id: 1, a: { b: ['deep running'] } }, { _id: 2, c: 'nothing here', n: 5 }]);
      assert.deepEqual(ids(await wild.find({ $text: { $search: 'runs' } }).toArray()), [1]);
      const [listed] = (await wild.listIndexes().toArray()).filter((i) => i.name === '$**_text');
      assert.deepEqual(listed?.weights, { '$**': 1 });
    });

    it(`on ${where}: each document's language (an embedded document's too) and each query's $language pick Snowball's stemmer and stop words`, async () => {
      const d = db();
      if (where !== 'one node') {
        await routerAdmin.command({ shardCollection: 'text.pets', key: { k: 1 } });
        await routerAdmin.command({ shardCollection: 'text.pet_notes', key: { k: 1 } });
      }
      const c = d.collection<AnyDoc>('pets');
      await c.createIndex({ text: 'text' });
      await c.insertMany([
        { _id: 1, k: 1, language: 'spanish', text: 'Los perros corren por el parque' },
        { _id: 2, k: 5, language: 'fr', text: 'Les chats dorment dans les maisons' },
        { _id: 3, k: 6, text: 'The dogs are running in the park' },
      ]);
      const found = async (search: AnyDoc): Promise<unknown[]> => ids(await c.find({ $text: search }).sort({ _id: 1 }).toArray());
      assert.deepEqual(await found({ $search: 'perro', $language: 'es' }), [1], 'perros and perro share the stem perr');
      assert.deepEqual(await found({ $search: 'chat maison', $language: 'french' }), [2]);
      assert.deepEqual(await found({ $search: 'run' }), [3]);
      assert.deepEqual(await found({ $search: 'los' }), [], 'los was a Spanish stop word when its document was indexed');
      assert.deepEqual(await found({ $search: 'les', $language: 'fr' }), [], 'a query of stop words only matches nothing');
      const notes = d.collection<AnyDoc>('pet_notes');
      await notes.createIndex({ title: 'text', 'notes.text': 'text' });
      await notes.insertOne({ _id: 1, k: 1, language: 'french', title: 'Les chiens courent', notes: [{ language: 'english', text: 'The dogs are running' }, { language: 'spanish', text: 'Los perros corren' }] });
      const noted = async (search: AnyDoc): Promise<unknown[]> => ids(await notes.find({ $text: search }).toArray());
      assert.deepEqual(await noted({ $search: 'run', $language: 'en' }), [1], 'an embedded document names its own language');
      assert.deepEqual(await noted({ $search: 'perro', $language: 'es' }), [1]);
      assert.deepEqual(await noted({ $search: 'los', $language: 'en' }), [], 'los is a stop word of the Spanish note');
      assert.deepEqual(await noted({ $search: 'chien', $language: 'fr' }), [1]);
    });

    it(`on ${where}: bad input gets MongoDB's errors and the server keeps serving`, async () => {
      const d = db();
      await assert.rejects(d.collection('stores').createIndex({ other: 'text' }), { code: 67, message: /only one text index per collection allowed/ });
      await d.collection<AnyDoc>('plain').insertOne({ _id: 1, k: 1, a: 'coffee' });
      await assert.rejects(d.collection('plain').find({ $text: { $search: 'coffee' } }).toArray(), { code: 27, message: /text index required for \$text query/ });
      await assert.rejects(d.collection('articles').find({ $text: { $search: 'leche', $language: 'xx' } }).toArray(), { code: 2 });
      await assert.rejects(d.collection('articles').find({}, { projection: { s: { $meta: 'textScore' } } }).toArray(), { code: 40218 });
      await assert.rejects(d.collection('articles').aggregate([{ $match: { k: 1 } }, { $match: { $text: { $search: 'coffee' } } }]).toArray(), { code: 17313 });
      assert.deepEqual(ids(await d.collection<AnyDoc>('articles').find({ $text: { $search: 'coffee' } }).toArray()), [1, 2, 7]);
    });
  }
});
