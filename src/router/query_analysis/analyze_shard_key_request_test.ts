import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MongoError } from '../../base/errors.js';
import type { Doc } from '../../bson/values.js';
import { parseAnalyzeShardKey } from './analyze_shard_key_request.js';
import { configureQueryAnalyzerReply, parseConfigureQueryAnalyzer, queryAnalyzerWrite } from './analyzer_configuration.js';
import { listSampledQueriesFilter } from './list_sampled_queries.js';

function codeOf(run: () => unknown): number | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    assert.ok(err instanceof MongoError);
    return err.code;
  }
}

test('analyzeShardKey: defaults, and the request refused as MongoDB refuses it', () => {
  const parsed = parseAnalyzeShardKey({ analyzeShardKey: 'db.c', key: { a: 1 } });
  assert.equal(parsed.keyCharacteristics, true);
  assert.equal(parsed.readWriteDistribution, true);
  assert.equal(parseAnalyzeShardKey({ analyzeShardKey: 'db.c', key: { a: 1 }, sampleSize: 10.7 }).sampleSize, 10);
  const refusals: [Doc, number][] = [
    [{ analyzeShardKey: 3, key: { a: 1 } }, 14],
    [{ analyzeShardKey: 'db.c' }, 40414],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, readWriteDistribution: 'no' }, 14],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, sampleRate: 'all' }, 14],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, sampleRate: 0 }, 2],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, sampleRate: 1.5 }, 2],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, sampleSize: 0 }, 2],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, sampleRate: 0.1, sampleSize: 5 }, 72],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, keyCharacteristics: false, readWriteDistribution: false }, 72],
    [{ analyzeShardKey: 'nodot', key: { a: 1 } }, 73],
    [{ analyzeShardKey: 'db.c', key: { a: 1 }, writeConcern: { w: 1 } }, 72],
    [{ analyzeShardKey: 'config.chunks', key: { a: 1 } }, 20],
    [{ analyzeShardKey: 'local.rs.oplog', key: { a: 1 } }, 20],
    [{ analyzeShardKey: 'admin.users', key: { a: 1 } }, 20],
    [{ analyzeShardKey: 'db.system.profile', key: { a: 1 } }, 20],
    [{ analyzeShardKey: 'db.enxcol_.basic.esc', key: { a: 1 } }, 20],
  ];
  for (const [cmd, code] of refusals) assert.equal(codeOf(() => parseAnalyzeShardKey(cmd)), code, JSON.stringify(cmd));
  for (const key of [{}, { '': 1 }, { a: '2d' }, { a: 'columnstore' }, { a: 0 }, { a: 'hashed', b: 'hashed' }, { 'a.': 1 }, { 'a..': 1 }, { $a: 1 }, { 'a.$x': 1 }, { '$**': 1 }]) {
    assert.equal(codeOf(() => parseAnalyzeShardKey({ analyzeShardKey: 'db.c', key })), 2, JSON.stringify(key));
  }
});

test('configureQueryAnalyzer: mode and samplesPerSecond checked as MongoDB checks them', () => {
  assert.deepEqual(parseConfigureQueryAnalyzer({ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: 0.5 }, false), { ns: 'db.c', mode: 'full', samplesPerSecond: 0.5 });
  assert.deepEqual(parseConfigureQueryAnalyzer({ configureQueryAnalyzer: 'db.c', mode: 'off' }, false), { ns: 'db.c', mode: 'off' });
  // Above 50 only where test commands are on, as MongoDB's TestingProctor allows it.
  assert.equal(parseConfigureQueryAnalyzer({ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: 1000 }, true).samplesPerSecond, 1000);
  const refusals: [Doc, number][] = [
    [{ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: 51 }, 72],
    [{ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: 0 }, 72],
    [{ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: -1 }, 72],
    [{ configureQueryAnalyzer: 'db.c', mode: 'full' }, 72],
    [{ configureQueryAnalyzer: 'db.c', mode: 'off', samplesPerSecond: 1 }, 72],
    [{ configureQueryAnalyzer: 'db.c', mode: 'half', samplesPerSecond: 1 }, 2],
    [{ configureQueryAnalyzer: 'db.c', samplesPerSecond: 1 }, 40414],
    [{ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: '1' }, 14],
    [{ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: 1, readConcern: { level: 'available' } }, 72],
    [{ configureQueryAnalyzer: 'db.c', mode: 'full', samplesPerSecond: 1, writeConcern: { w: 'majority' } }, 72],
    [{ configureQueryAnalyzer: 'config.chunks', mode: 'full', samplesPerSecond: 1 }, 20],
  ];
  for (const [cmd, code] of refusals) assert.equal(codeOf(() => parseConfigureQueryAnalyzer(cmd, false)), code, JSON.stringify(cmd));
});

test('configureQueryAnalyzer writes one document per namespace and answers the old configuration of the same collection only', () => {
  const now = new Date(5);
  const on = queryAnalyzerWrite({ ns: 'db.c', mode: 'full', samplesPerSecond: 2 }, 'u1', now);
  assert.deepEqual(on.query, { _id: 'db.c' });
  assert.equal(on.upsert, true);
  const off = queryAnalyzerWrite({ ns: 'db.c', mode: 'off' }, 'u1', now);
  assert.deepEqual(off.query, { _id: 'db.c', mode: { $ne: 'off' } });
  assert.deepEqual(off.update, [{ $set: { mode: 'off', stopTime: now } }]);
  const same = (a: unknown, b: unknown) => a === b;
  const request = { ns: 'db.c', mode: 'full' as const, samplesPerSecond: 2 };
  assert.deepEqual(configureQueryAnalyzerReply(request, null, 'u1', same), { newConfiguration: { mode: 'full', samplesPerSecond: 2 }, ok: 1 });
  assert.deepEqual(configureQueryAnalyzerReply(request, { collUuid: 'u1', mode: 'off', samplesPerSecond: 1 }, 'u1', same).oldConfiguration, { mode: 'off', samplesPerSecond: 1 });
  assert.equal(configureQueryAnalyzerReply(request, { collUuid: 'u0', mode: 'full', samplesPerSecond: 1 }, 'u1', same).oldConfiguration, undefined);
});

test('$listSampledQueries: on admin with {aggregate: 1}, an optional namespace', () => {
  assert.deepEqual(listSampledQueriesFilter('admin', { aggregate: 1 }, {}), {});
  assert.deepEqual(listSampledQueriesFilter('admin', { aggregate: 1 }, { namespace: 'db.c' }), { ns: 'db.c' });
  assert.equal(codeOf(() => listSampledQueriesFilter('db', { aggregate: 1 }, {})), 73);
  assert.equal(codeOf(() => listSampledQueriesFilter('admin', { aggregate: 'c' }, {})), 73);
  assert.equal(codeOf(() => listSampledQueriesFilter('admin', { aggregate: 1 }, { namespace: 3 })), 14);
  assert.equal(codeOf(() => listSampledQueriesFilter('admin', { aggregate: 1 }, { namespace: 'nodot' })), 73);
  assert.equal(codeOf(() => listSampledQueriesFilter('admin', { aggregate: 1 }, { ns: 'db.c' })), 40415);
});
