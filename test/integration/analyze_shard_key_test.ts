import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Binary, BSON, type Db, type MongoClient } from 'mongodb';
import type { SpawnedCluster } from '../helpers/spawn_cluster.js';
import type { AnyDoc } from '../helpers/spawn_node.js';
import { withCluster } from '../helpers/fixtures.js';
import { refusal } from '../helpers/server_errors.js';

const MONGOSH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/mongosh');
const run = promisify(execFile);

// configureQueryAnalyzer, query sampling and analyzeShardKey through a router, on one cluster of
// two shards shared by every case, over a collection whose figures are known: 1000 documents
// inserted in `seq` order, `h` a permutation of 0..999 (spread, not in insertion order), `tenant`
// taking 'a' 400 times, 'b' 300, 'c' 200, 'd' 90 and e0..e9 once each.
describe('analyzeShardKey and configureQueryAnalyzer through a router', () => {
  let cluster: SpawnedCluster;
  let client: MongoClient;
  let admin: Db;
  let config: Db;
  // The primary shard, where the unsharded collections' writes and their sampled diffs land.
  let f0: MongoClient;
  const ns = 'ask.events';
  const docs = Array.from({ length: 1000 }, (_, i) => ({
    _id: i, seq: i, h: (i * 7919) % 1000, tenant: i < 400 ? 'a' : i < 700 ? 'b' : i < 900 ? 'c' : i < 990 ? 'd' : `e${i - 990}`,
  }));

  withCluster({ shards: 2, enableTestCommands: true }, async (f) => {
    ({ cluster, client } = f);
    admin = client.db('admin');
    config = f.connect(cluster.config.uri).db('config');
    f0 = f.connect(cluster.shards[0]!.uri);
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'ask', primaryShard: 'shard0' });
    const events = client.db('ask').collection<AnyDoc>('events');
    await events.insertMany(docs);
    await events.createIndexes([{ key: { seq: 1 }, unique: true }, { key: { h: 1 } }, { key: { tenant: 1 } }, { key: { seq: 'hashed' } }]);
  });

  async function analyze(key: AnyDoc, options: AnyDoc = {}): Promise<AnyDoc> {
    return admin.command({ analyzeShardKey: ns, key, ...options });
  }

  it('reports the characteristics of a unique monotonic key, a frequent one and spread ones, as the data holds them', async () => {
    const seq = (await analyze({ seq: 1 }, { readWriteDistribution: false })).keyCharacteristics as AnyDoc;
    const bytes = docs.reduce((n, d) => n + BSON.calculateObjectSize(d), 0);
    assert.deepEqual(seq, {
      numDocsTotal: 1000, avgDocSizeBytes: Math.floor(bytes / 1000), numDocsSampled: 1000, isUnique: true, numDistinctValues: 1000,
      mostCommonValues: [0, 1, 2, 3, 4].map((v) => ({ value: { seq: v }, frequency: 1 })),
      monotonicity: { recordIdCorrelationCoefficient: 1, type: 'monotonic' },
    });

    const tenant = (await analyze({ tenant: 1 }, { readWriteDistribution: false })).keyCharacteristics as AnyDoc;
    assert.equal(tenant.isUnique, false);
    assert.equal(tenant.numDistinctValues, 14);
    assert.deepEqual(tenant.mostCommonValues, [['a', 400], ['b', 300], ['c', 200], ['d', 90], ['e0', 1]].map(([v, n]) => ({ value: { tenant: v }, frequency: n })));

    const spread = (await analyze({ h: 1 }, { readWriteDistribution: false })).keyCharacteristics as AnyDoc;
    assert.equal(spread.numDistinctValues, 1000);
    assert.equal((spread.monotonicity as AnyDoc).type, 'not monotonic');
    assert.ok(Math.abs((spread.monotonicity as AnyDoc).recordIdCorrelationCoefficient as number) < 0.7);

    const hashed = (await analyze({ seq: 'hashed' }, { readWriteDistribution: false })).keyCharacteristics as AnyDoc;
    assert.deepEqual(hashed.monotonicity, { recordIdCorrelationCoefficient: 0, type: 'not monotonic' });
    // The unique index on seq supports it too, and distinct values hash apart.
    assert.equal(hashed.isUnique, true);

    // sampleSize: the figures of 100 documents drawn at random.
    const sampled = (await analyze({ tenant: 1 }, { readWriteDistribution: false, sampleSize: 100 })).keyCharacteristics as AnyDoc;
    assert.equal(sampled.numDocsTotal, 1000);
    assert.equal(sampled.numDocsSampled, 100);
  });

  it('samples reads and writes while the analyzer is on, and judges each key by them: the monotonic key hot in one range, the hashed one spread', async () => {
    const events = client.db('ask').collection('events');
    const on = await admin.command({ configureQueryAnalyzer: ns, mode: 'full', samplesPerSecond: 1000 });
    assert.deepEqual(on.newConfiguration, { mode: 'full', samplesPerSecond: 1000 });
    assert.equal(on.oldConfiguration, undefined);
    const again = await admin.command({ configureQueryAnalyzer: ns, mode: 'full', samplesPerSecond: 2000 });
    assert.deepEqual(again.oldConfiguration, { mode: 'full', samplesPerSecond: 1000 });
    const stored = await config.collection('queryAnalyzers').findOne({ _id: ns as never });
    assert.equal(stored?.mode, 'full');
    assert.equal(stored?.samplesPerSecond, 2000);
    assert.ok(stored?.startTime instanceof Date);

    // Reads: 10 on a range of the newest values, 5 by tenant (no key), 3 findOne, 3 counts and 3
    // distincts by one value.
    for (let k = 0; k < 10; k++) await events.find({ seq: { $gte: 995 } }).toArray();
    for (let k = 0; k < 5; k++) await events.find({ tenant: 'a' }).toArray();
    for (let k = 0; k < 3; k++) await events.findOne({ seq: 7 });
    for (let k = 0; k < 3; k++) await events.countDocuments({ seq: 5 });
    for (let k = 0; k < 3; k++) await events.distinct('tenant', { seq: 15 });
    // Writes: 40 updates of the 10 newest values (the hot end of a monotonic key), 5 multi
    // updates by tenant, 3 findAndModify and 3 deletes by one value.
    for (let k = 0; k < 40; k++) await events.updateOne({ seq: 990 + (k % 10) }, { $inc: { n: 1 } });
    for (let k = 0; k < 5; k++) await events.updateMany({ tenant: 'b' }, { $inc: { m: 1 } });
    for (let k = 0; k < 3; k++) await events.findOneAndUpdate({ seq: 3 }, { $inc: { n: 1 } });
    for (let k = 0; k < 3; k++) await events.deleteOne({ seq: 5000 });

    const monotonic = await analyze({ seq: 1 }, { keyCharacteristics: false });
    assert.equal(monotonic.keyCharacteristics, undefined);
    const byRange = (base: number, extra: Record<number, number>): number[] => Array.from({ length: 100 }, (_, i) => base + (extra[i] ?? 0));
    assert.deepEqual(monotonic.readDistribution, {
      sampleSize: { total: 24, find: 18, aggregate: 3, count: 0, distinct: 3 },
      percentageOfSingleShardReads: 37.5, percentageOfMultiShardReads: 41.6666666667, percentageOfScatterGatherReads: 20.8333333333,
      numReadsByRange: byRange(5, { 0: 6, 1: 3, 99: 10 }),
    });
    assert.deepEqual(monotonic.writeDistribution, {
      sampleSize: { total: 51, update: 45, delete: 3, findAndModify: 3 },
      percentageOfSingleShardWrites: 90.1960784314, percentageOfMultiShardWrites: 0, percentageOfScatterGatherWrites: 9.8039215686,
      numWritesByRange: byRange(5, { 0: 3, 99: 43 }),
      percentageOfShardKeyUpdates: 0, percentageOfSingleWritesWithoutShardKey: 0, percentageOfMultiWritesWithoutShardKey: 9.8039215686,
    });

    // The same samples under the hashed key: still single-shard writes, but over many ranges.
    const hashed = await analyze({ seq: 'hashed' }, { keyCharacteristics: false });
    const writes = hashed.writeDistribution as AnyDoc;
    assert.equal(writes.percentageOfSingleShardWrites, 90.1960784314);
    const hot = (writes.numWritesByRange as number[]).map((n) => n - 5).filter((n) => n > 0);
    assert.ok(hot.length >= 5, `the 12 point-written values land in many ranges: ${JSON.stringify(writes.numWritesByRange)}`);
    assert.ok(Math.max(...hot) <= 12, `no range takes most writes: ${JSON.stringify(writes.numWritesByRange)}`);
    // A range read of a hashed key reaches every range.
    assert.equal((hashed.readDistribution as AnyDoc).percentageOfScatterGatherReads, 62.5);

    const [update] = await config.collection<AnyDoc>('sampledQueries').find({ ns, cmdName: 'update' }).limit(1).toArray();
    const [info] = (await client.db('ask').command({ listCollections: 1, filter: { name: 'events' } })).cursor.firstBatch as AnyDoc[];
    const sampleId: unknown = update!._id;
    assert.ok(sampleId instanceof Binary && sampleId.sub_type === 4);
    assert.deepEqual(update!.collectionUuid, (info!.info as AnyDoc).uuid);
    assert.equal(((update!.cmd as AnyDoc).updates as AnyDoc[]).length, 1);
    assert.ok((update!.expireAt as Date).getTime() > Date.now() + 6 * 24 * 3600 * 1000);

    const listed = await admin.aggregate([{ $listSampledQueries: { namespace: ns } }, { $group: { _id: '$cmdName', n: { $sum: 1 } } }, { $sort: { _id: 1 } }]).toArray();
    assert.deepEqual(listed, [['aggregate', 3], ['delete', 3], ['distinct', 3], ['find', 18], ['findAndModify', 3], ['update', 45]].map(([_id, n]) => ({ _id, n })));
    assert.equal((await refusal(() => client.db('ask').aggregate([{ $listSampledQueries: {} }]).toArray())).code, 73);
    const [sampling] = await admin.aggregate([{ $currentOp: { localOps: true } }, { $match: { desc: 'query analyzer' } }]).toArray();
    assert.deepEqual({ ...sampling, collUuid: undefined, startTime: undefined }, {
      desc: 'query analyzer', ns, collUuid: undefined, samplesPerSecond: 2000, startTime: undefined, sampledReadsCount: 24, sampledWritesCount: 51,
    });
    assert.deepEqual(sampling!.startTime, stored!.startTime);
    assert.deepEqual((await admin.command({ serverStatus: 1 })).queryAnalyzers, { activeCollections: 1, totalCollections: 1, totalSampledReadsCount: 24, totalSampledWritesCount: 51 });

    // Off: the old configuration answered, nothing sampled any more.
    const off = await admin.command({ configureQueryAnalyzer: ns, mode: 'off' });
    assert.deepEqual(off.newConfiguration, { mode: 'off' });
    assert.deepEqual(off.oldConfiguration, { mode: 'full', samplesPerSecond: 2000 });
    await events.updateOne({ seq: 1 }, { $inc: { n: 1 } });
    const after = await analyze({ seq: 1 }, { keyCharacteristics: false });
    assert.equal(((after.writeDistribution as AnyDoc).sampleSize as AnyDoc).total, 51);
  });

  it('counts shard key updates from the diffs the shards record of sampled writes', async () => {
    const moves = client.db('ask').collection<AnyDoc>('moves');
    await moves.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, k: i, g: 0 })));
    await admin.command({ configureQueryAnalyzer: 'ask.moves', mode: 'full', samplesPerSecond: 1000 });
    for (let i = 0; i < 3; i++) await moves.updateOne({ _id: i }, { $set: { k: 100 + i } });
    for (let i = 3; i < 5; i++) await moves.updateOne({ _id: i }, { $set: { g: 1 } });
    await moves.findOneAndUpdate({ _id: 9 }, { $inc: { k: 1 } });
    await admin.command({ configureQueryAnalyzer: 'ask.moves', mode: 'off' });
    const byK = (await admin.command({ analyzeShardKey: 'ask.moves', key: { k: 1 }, keyCharacteristics: false })).writeDistribution as AnyDoc;
    assert.deepEqual([byK.sampleSize, byK.percentageOfShardKeyUpdates, byK.percentageOfSingleWritesWithoutShardKey], [
      { total: 6, update: 5, delete: 0, findAndModify: 1 }, 66.6666666667, 100,
    ]);
    const byId = (await admin.command({ analyzeShardKey: 'ask.moves', key: { _id: 1 }, keyCharacteristics: false })).writeDistribution as AnyDoc;
    assert.deepEqual([byId.percentageOfShardKeyUpdates, byId.percentageOfSingleShardWrites], [0, 100]);
    const diffs = await f0.db('config').collection<AnyDoc>('sampledQueriesDiff').find({ ns: 'ask.moves' }).toArray();
    assert.equal(diffs.length, 6);
    assert.ok(diffs.some((d) => JSON.stringify(d.diff) === JSON.stringify({ u: { k: 100 } })));
  });

  it('a sharded collection reports its orphans and its monotonic key', async () => {
    await admin.command({ shardCollection: 'ask.sharded', key: { x: 1 } });
    await admin.command({ split: 'ask.sharded', middle: { x: 50 } });
    await admin.command({ moveChunk: 'ask.sharded', find: { x: 50 }, to: 'shard1', _waitForDelete: true });
    await client.db('ask').collection('sharded').insertMany(Array.from({ length: 100 }, (_, x) => ({ x })));
    const reply = await admin.command({ analyzeShardKey: 'ask.sharded', key: { x: 1 }, readWriteDistribution: false });
    const ks = reply.keyCharacteristics as AnyDoc;
    assert.equal(ks.numDocsTotal, 100);
    assert.equal(ks.numOrphanDocs, 0);
    assert.equal(ks.numDistinctValues, 100);
    assert.equal((ks.monotonicity as AnyDoc).type, 'monotonic');
  });

  it('refuses bad input with MongoDB\'s errors and changes nothing', async () => {
    await client.db('ask').createCollection('eventsView', { viewOn: 'events', pipeline: [] });
    const analyzers = await config.collection('queryAnalyzers').countDocuments();
    const cases: [AnyDoc, number, string][] = [
      [{ analyzeShardKey: 'ask.eventsView', key: { seq: 1 } }, 166, 'CommandNotSupportedOnView'],
      [{ configureQueryAnalyzer: 'ask.eventsView', mode: 'full', samplesPerSecond: 1 }, 166, 'CommandNotSupportedOnView'],
      [{ analyzeShardKey: ns, key: { nokey: 1 }, readWriteDistribution: false }, 20, 'IllegalOperation'],
      [{ analyzeShardKey: ns, key: { seq: 1 }, bogus: 1 }, 40415, 'Location40415'],
      [{ analyzeShardKey: ns, key: { seq: 1 }, keyCharacteristics: 'yes' }, 14, 'TypeMismatch'],
      [{ analyzeShardKey: ns, key: 'seq' }, 14, 'TypeMismatch'],
      [{ analyzeShardKey: 'ask.none', key: { seq: 1 } }, 26, 'NamespaceNotFound'],
      [{ analyzeShardKey: ns, key: { seq: 0 } }, 2, 'BadValue'],
      [{ analyzeShardKey: ns, key: { $a: 1 } }, 2, 'BadValue'],
      [{ analyzeShardKey: ns, key: { seq: 1 }, keyCharacteristics: false, readWriteDistribution: false }, 72, 'InvalidOptions'],
      [{ analyzeShardKey: ns, key: { seq: 1 }, sampleRate: 0.5, sampleSize: 10 }, 72, 'InvalidOptions'],
      [{ analyzeShardKey: 'config.chunks', key: { _id: 1 } }, 20, 'IllegalOperation'],
      [{ configureQueryAnalyzer: ns, mode: 'sometimes', samplesPerSecond: 1 }, 2, 'BadValue'],
      [{ configureQueryAnalyzer: ns, mode: 'full', samplesPerSecond: 0 }, 72, 'InvalidOptions'],
      [{ configureQueryAnalyzer: ns, mode: 'full' }, 72, 'InvalidOptions'],
      [{ configureQueryAnalyzer: ns, mode: 'off', samplesPerSecond: 1 }, 72, 'InvalidOptions'],
      [{ configureQueryAnalyzer: 'ask.none', mode: 'full', samplesPerSecond: 1 }, 26, 'NamespaceNotFound'],
      [{ configureQueryAnalyzer: ns, mode: 'full', samplesPerSecond: 1, bogus: true }, 40415, 'Location40415'],
    ];
    for (const [cmd, code, codeName] of cases) {
      const err = await refusal(() => admin.command(cmd));
      assert.deepEqual([err.code, err.codeName], [code, codeName], `${JSON.stringify(cmd)}: ${err.message}`);
    }
    const noIndex = await refusal(() => admin.command(cases[2]![0]));
    assert.equal(noIndex.message, 'Cannot analyze the characteristics of a shard key that does not have a supporting index');
    // Without a supporting index, the read and write distribution alone.
    const distributionOnly = await analyze({ nokey: 1 });
    assert.equal(distributionOnly.keyCharacteristics, undefined);
    assert.ok(distributionOnly.writeDistribution !== undefined);
    assert.equal(await config.collection('queryAnalyzers').countDocuments(), analyzers);
  });

  it('dropping or renaming a collection turns its analyzer off', async () => {
    const db = client.db('ask');
    await db.collection('dropped').insertOne({ a: 1 });
    await db.collection('renamed').insertOne({ a: 1 });
    for (const coll of ['dropped', 'renamed']) await admin.command({ configureQueryAnalyzer: `ask.${coll}`, mode: 'full', samplesPerSecond: 1 });
    const analyzers = config.collection<AnyDoc>('queryAnalyzers');
    assert.equal(await analyzers.countDocuments({ _id: { $in: ['ask.dropped', 'ask.renamed'] } }), 2);
    await db.collection('dropped').drop();
    await db.collection('renamed').rename('elsewhere');
    assert.deepEqual(await analyzers.find({ _id: { $in: ['ask.dropped', 'ask.renamed', 'ask.elsewhere'] } }).toArray(), []);
  });

  it('mongosh\'s helpers send what the router accepts', async () => {
    const script = [
      "const c = db.getSiblingDB('ask').events;",
      'print(JSON.stringify(c.configureQueryAnalyzer({ mode: "full", samplesPerSecond: 5 }).newConfiguration));',
      'print(JSON.stringify(c.analyzeShardKey({ tenant: 1 }, { readWriteDistribution: false }).keyCharacteristics.numDistinctValues));',
      'print(JSON.stringify(db.adminCommand({ configureQueryAnalyzer: "ask.events", mode: "off" }).newConfiguration));',
    ].join('\n');
    const { stdout } = await run(MONGOSH, [cluster.routers[0]!.uri, '--quiet', '--norc', '--eval', script], { timeout: 60_000, env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: '1' } });
    assert.deepEqual(stdout.trim().split('\n'), ['{"mode":"full","samplesPerSecond":5}', '14', '{"mode":"off"}']);
  });
});
