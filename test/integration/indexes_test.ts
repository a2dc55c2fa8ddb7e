import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MongoClient, type Db } from 'mongodb';
import { removeDir, spawnNode, type AnyDoc } from '../helpers/spawn_node.js';
import { withNode } from '../helpers/fixtures.js';

function stagesOf(plan: unknown): string[] {
  const out: string[] = [];
  const walk = (p: unknown): void => {
    if (p && typeof p === 'object') {
      const o = p as Record<string, unknown>;
      if (typeof o.stage === 'string') out.push(o.stage);
      walk(o.inputStage);
    }
  };
  walk(plan);
  return out;
}

describe('index kinds through the driver', () => {
  let client: MongoClient;
  let db: Db;
  withNode({ extraArgs: ['--enableTestCommands'] }, async (f) => {
    client = f.client;
    db = client.db('idx');
  });

  it('answers compound, descending and multikey queries through an index without duplicates', async () => {
    const c = db.collection<AnyDoc>('multi');
    await c.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, a: i % 5, b: i, tags: [i % 3, (i % 3) + 10, i % 3] })));
    await c.createIndex({ a: 1, b: -1 });
    await c.createIndex({ tags: 1 });
    const compound = await c.find({ a: 2, b: { $gt: 20 } }).sort({ b: -1 }).toArray();
    assert.deepEqual(compound.map((d) => d.b), [47, 42, 37, 32, 27, 22]);
    const ex = await c.find({ a: 2, b: { $gt: 20 } }).sort({ b: -1 }).explain('executionStats');
    assert.ok(stagesOf(ex.queryPlanner.winningPlan).includes('IXSCAN'));
    assert.ok(!stagesOf(ex.queryPlanner.winningPlan).includes('SORT'), 'the index provides the sort');
    assert.equal(ex.executionStats.totalKeysExamined, 6);
    const multikey = await c.find({ tags: { $in: [1, 11] } }).toArray();
    assert.equal(multikey.length, 17);
    assert.equal(new Set(multikey.map((d) => d._id)).size, 17);
    const idx = await c.listIndexes().toArray();
    assert.deepEqual(idx.map((i) => i.name), ['_id_', 'a_1_b_-1', 'tags_1']);
  });

  it('keeps sparse and partial indexes to the documents they cover', async () => {
    const c = db.collection<AnyDoc>('sparse');
    await c.insertMany([{ _id: 1, s: 1, p: 5 }, { _id: 2, p: 50 }, { _id: 3, s: 3, p: 500 }]);
    await c.createIndex({ s: 1 }, { sparse: true, unique: true });
    await c.insertOne({ _id: 4 });
    await c.createIndex({ p: 1 }, { partialFilterExpression: { p: { $gt: 10 } }, unique: true });
    await c.insertOne({ _id: 5, p: 5 });
    await assert.rejects(c.insertOne({ _id: 6, p: 50 }), (e: unknown) => (e as { code: number }).code === 11000);
    const hinted = await c.find({ s: { $gte: 0 } }).hint('s_1').toArray();
    assert.deepEqual(hinted.map((d) => d._id), [1, 3]);
    assert.equal(await c.countDocuments({ s: null }), 3);
  });

  it('takes only the expressions MongoDB allows in a partialFilterExpression', async () => {
    const c = db.collection<AnyDoc>('partial_rules');
    await c.insertOne({ _id: 1, q: 1 });
    const refusal = async (filter: AnyDoc, options: AnyDoc = {}): Promise<number> => {
      try {
        await c.createIndex({ q: 1 }, { partialFilterExpression: filter, name: 'refused', ...options });
      } catch (e) {
        return (e as { code: number }).code;
      }
      return 0;
    };
    assert.equal(await refusal({ q: { $exists: false } }), 67);
    assert.equal(await refusal({ q: { $ne: 1 } }), 67);
    assert.equal(await refusal({ $nor: [{ q: 1 }] }), 67);
    assert.equal(await refusal({ q: /x/ }), 67);
    assert.equal(await refusal({ q: { $size: 2 } }), 67);
    assert.equal(await refusal({ q: { $elemMatch: { $gt: 1 } } }), 67);
    assert.equal(await refusal({ $expr: { $eq: ['$q', 1] } }), 224);
    assert.equal(await refusal({ q: { $foo: 1 } }), 2, 'an unknown operator is a parse error first');
    assert.equal(await refusal({ q: 1 }, { sparse: true }), 67);
    assert.deepEqual((await c.listIndexes().toArray()).map((i) => i.name), ['_id_'], 'nothing refused was built');
    for (const [i, filter] of [{ q: { $exists: true } }, { q: { $in: [1, 2] } }, { q: { $type: 'string' } }, { $or: [{ q: 1 }, { r: { $gt: 2 } }] }, { q: { $gte: 1, $lt: 5 } }, { q: null }, { $and: [{ q: 1 }, { $or: [{ r: 1 }, { s: 2 }] }] }].entries()) {
      await c.createIndex({ q: 1, [`f${i}`]: 1 }, { partialFilterExpression: filter });
    }
    assert.equal((await c.listIndexes().toArray()).length, 8);
  });

  it('uses a hashed index for equality and rejects arrays in hashed fields', async () => {
    const c = db.collection<AnyDoc>('hashed');
    await c.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, h: `k${i}` })));
    await c.createIndex({ h: 'hashed' });
    const ex = await c.find({ h: 'k42' }).explain('executionStats');
    assert.ok(stagesOf(ex.queryPlanner.winningPlan).includes('IXSCAN'));
    assert.equal(ex.executionStats.totalKeysExamined, 1);
    assert.equal(ex.executionStats.nReturned, 1);
    await assert.rejects(c.insertOne({ h: [1, 2] }), (e: unknown) => (e as { code: number }).code === 16766);
  });

  it('builds a unique index over existing data and refuses it over duplicates', async () => {
    const c = db.collection<AnyDoc>('build');
    await c.insertMany([{ u: 1 }, { u: 2 }, { u: 2 }]);
    await assert.rejects(c.createIndex({ u: 1 }, { unique: true }), (e: unknown) => (e as { code: number }).code === 11000);
    assert.deepEqual((await c.listIndexes().toArray()).map((i) => i.name), ['_id_']);
    await c.deleteOne({ u: 2 });
    await c.createIndex({ u: 1 }, { unique: true });
    assert.equal((await c.listIndexes().toArray()).length, 2);
  });

  it('answers min/max with a hint and refuses them without one', async () => {
    const c = db.collection<AnyDoc>('minmax');
    await c.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, m: i })));
    await c.createIndex({ m: 1 });
    const docs = await c.find({}).min({ m: 3 }).max({ m: 6 }).hint({ m: 1 }).toArray();
    assert.deepEqual(docs.map((d) => d.m), [3, 4, 5]);
    await assert.rejects(c.find({}).min({ m: 3 }).toArray(), (e: unknown) => (e as { code: number }).code === 51173);
  });

  it('accepts configureFailPoint only with --enableTestCommands', async () => {
    const reply = await client.db('admin').command({ configureFailPoint: 'anything', mode: 'alwaysOn' });
    assert.equal(reply.ok, 1);
    await client.db('admin').command({ configureFailPoint: 'anything', mode: 'off' });
  });
});

describe('start-up parameters', () => {
  it('reports a --setParameter value through getParameter', async () => {
    const node = await spawnNode({ extraArgs: ['--setParameter', 'orphanCleanupDelaySecs=3'] });
    const client = new MongoClient(node.uri);
    try {
      const reply = await client.db('admin').command({ getParameter: 1, orphanCleanupDelaySecs: 1 });
      assert.equal(reply.orphanCleanupDelaySecs, 3);
    } finally {
      await client.close();
      await node.stop();
      removeDir(node.dbpath);
    }
  });
});

describe('a node without --enableTestCommands', () => {
  it('does not know test-only commands and shuts down cleanly on SIGTERM', async () => {
    const node = await spawnNode();
    const client = new MongoClient(node.uri);
    try {
      await assert.rejects(client.db('admin').command({ configureFailPoint: 'x', mode: 'off' }), (e: unknown) => (e as { code: number }).code === 59);
    } finally {
      await client.close();
    }
    const exited = new Promise<number | null>((resolve) => node.child.once('exit', (code) => resolve(code)));
    node.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.ok(node.logs.some((l) => l.includes('Shutting down')));
    removeDir(node.dbpath);
  });
});
