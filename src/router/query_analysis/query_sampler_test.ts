import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryAnalysisSampler } from './query_sampler.js';
import { sampledCommands, sampledQueryDocument } from './sampled_query.js';

const analyzer = (ns: string, samplesPerSecond: number) => ({ ns, collUuid: 'u1', samplesPerSecond });

test('nothing is sampled while no analyzer is on', () => {
  const sampler = new QueryAnalysisSampler();
  assert.equal(sampler.anyActive, false);
  assert.equal(sampler.isSampled('db.c'), false);
  assert.equal(sampler.take('db.c', 0), undefined);
});

test('a token bucket per collection: a burst of twice the rate, then the rate', () => {
  const sampler = new QueryAnalysisSampler();
  sampler.setActive([analyzer('db.c', 2)], 0);
  assert.equal(sampler.isSampled('db.c'), true);
  assert.equal(sampler.isSampled('db.other'), false);
  const taken = (now: number, n: number) => Array.from({ length: n }, () => sampler.take('db.c', now)).filter((a) => a !== undefined).length;
  assert.equal(taken(0, 10), 4);
  assert.equal(taken(250, 10), 0);
  assert.equal(taken(500, 10), 1);
  assert.equal(taken(10_000, 10), 4);
});

test('a refresh keeps an unchanged bucket, restarts a changed one, drops an analyzer turned off', () => {
  const sampler = new QueryAnalysisSampler();
  sampler.setActive([analyzer('db.a', 1), analyzer('db.b', 1)], 0);
  sampler.take('db.a', 0);
  sampler.take('db.a', 0);
  sampler.setActive([analyzer('db.a', 1), analyzer('db.b', 5)], 0);
  assert.equal(sampler.take('db.a', 0), undefined);
  sampler.setOne('db.b', undefined, 0);
  assert.equal(sampler.isSampled('db.b'), false);
  assert.equal(sampler.isSampled('db.a'), true);
  sampler.setOne('db.b', analyzer('db.b', 1), 0);
  assert.ok(sampler.take('db.b', 0) !== undefined);
});

test('samples are kept until drained, and counted for serverStatus', () => {
  const sampler = new QueryAnalysisSampler();
  sampler.setActive([analyzer('db.b', 1)], 0);
  sampler.record('db.a', { n: 1 }, true);
  sampler.record('db.a', { n: 2 }, false);
  sampler.record('db.a', { n: 3 }, false);
  assert.deepEqual(sampler.drain(), [{ n: 1 }, { n: 2 }, { n: 3 }]);
  assert.deepEqual(sampler.drain(), []);
  assert.deepEqual(sampler.serverStatus(), { activeCollections: 1, totalCollections: 2, totalSampledReadsCount: 1, totalSampledWritesCount: 2 });
});

test('what a sample keeps of each command: a read\'s filter, collation and let; a write statement by statement', () => {
  assert.deepEqual(sampledCommands('find', { find: 'c', filter: { a: 1 }, let: { x: 1 }, projection: { a: 1 } }), [{ filter: { a: 1 }, collation: {}, let: { x: 1 } }]);
  assert.deepEqual(sampledCommands('aggregate', { aggregate: 'c', pipeline: [{ $match: { a: 2 } }, { $group: { _id: null } }], collation: { locale: 'fr' } }), [{ filter: { a: 2 }, collation: { locale: 'fr' } }]);
  assert.deepEqual(sampledCommands('aggregate', { aggregate: 'c', pipeline: [{ $project: { a: 1 } }] }), [{ filter: {}, collation: {} }]);
  assert.deepEqual(sampledCommands('count', { count: 'c', query: { a: 3 } }), [{ filter: { a: 3 }, collation: {} }]);
  assert.deepEqual(sampledCommands('update', { update: 'c', updates: [{ q: { a: 1 }, u: { $set: { b: 1 } } }, { q: { a: 2 }, u: { b: 2 } }] }), [
    { update: 'c', updates: [{ q: { a: 1 }, u: { $set: { b: 1 } } }] },
    { update: 'c', updates: [{ q: { a: 2 }, u: { b: 2 } }] },
  ]);
  assert.deepEqual(sampledCommands('delete', { delete: 'c', deletes: [{ q: { a: 1 }, limit: 1 }] }), [{ delete: 'c', deletes: [{ q: { a: 1 }, limit: 1 }] }]);
  assert.deepEqual(sampledCommands('findAndModify', { findAndModify: 'c', query: { a: 1 }, update: { $inc: { n: 1 } }, new: true, maxTimeMS: 5 }), [
    { findAndModify: 'c', query: { a: 1 }, update: { $inc: { n: 1 } }, new: true },
  ]);
  assert.deepEqual(sampledCommands('insert', { insert: 'c', documents: [{}] }), []);
});

test('a sample document expires a week after it was taken', () => {
  const doc = sampledQueryDocument('id', 'db.c', 'uuid', 'find', { filter: {} }, 1000);
  assert.deepEqual(doc, { _id: 'id', ns: 'db.c', collectionUuid: 'uuid', cmdName: 'find', cmd: { filter: {} }, expireAt: new Date(1000 + 7 * 24 * 3600 * 1000) });
});

test('$currentOp: one entry per collection sampled, counted since its analyzer was turned on', () => {
  const sampler = new QueryAnalysisSampler();
  const startTime = new Date(7);
  sampler.setActive([{ ...analyzer('db.a', 1), startTime }], 0);
  sampler.record('db.a', {}, true);
  sampler.record('db.a', {}, false);
  sampler.setActive([{ ...analyzer('db.a', 1), startTime }], 10);
  assert.deepEqual(sampler.currentOp(), [{ desc: 'query analyzer', ns: 'db.a', collUuid: 'u1', samplesPerSecond: 1, startTime, sampledReadsCount: 1, sampledWritesCount: 1 }]);
  sampler.setActive([analyzer('db.a', 3)], 20);
  assert.deepEqual(sampler.currentOp(), [{ desc: 'query analyzer', ns: 'db.a', collUuid: 'u1', samplesPerSecond: 3, sampledReadsCount: 0, sampledWritesCount: 0 }]);
});

test('the routers that are up share each rate evenly', () => {
  const sampler = new QueryAnalysisSampler();
  sampler.setRouterCount(4);
  sampler.setActive([analyzer('db.c', 8)], 0);
  const taken = (now: number, n: number) => Array.from({ length: n }, () => sampler.take('db.c', now)).filter((a) => a !== undefined).length;
  assert.equal(taken(0, 10), 4);
  assert.equal(taken(1000, 10), 2);
  assert.equal(sampler.currentOp()[0]!.samplesPerSecond, 2);
  sampler.setRouterCount(0);
  assert.equal(sampler.currentOp()[0]!.samplesPerSecond, 8);
});
